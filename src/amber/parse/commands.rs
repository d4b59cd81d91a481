//! The commands of a script: `REPEAT`, `RUN`, `COPY` and `EXPECT` with its comparisons.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn repeat(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "REPEAT";
        let (w, l) = self.word(C, "a count")?;
        let count = match Literal::parse(w) {
            Some(Literal::Int(n)) if (1..=u32::MAX as i128).contains(&n) => n as u32,
            _ => {
                return err(
                    l,
                    C,
                    format!("invalid count parameter for REPEAT command: {w} (must be > 0)"),
                )
            }
        };
        self.end_of_statement("REPEAT")?;
        let mut commands = Vec::new();
        loop {
            let (t, l) = self.next();
            match t {
                Tok::Eol => continue,
                Tok::Eos => return err(line, C, "missing END for REPEAT command"),
                Tok::Word("END") => break,
                Tok::Word(w) if is_repeatable(w) => commands.push(self.repeatable(w, l)?),
                Tok::Word(w) => {
                    return err(l, C, format!("{w} cannot be used inside REPEAT (RUN, COPY, EXPECT and CLEAR commands can)"))
                }
            }
        }
        self.end_of_statement("REPEAT")?;
        Ok(Command::Repeat {
            line,
            count,
            commands,
        })
    }

    pub(super) fn repeatable(&mut self, w: &str, line: usize) -> PResult<Command> {
        match w {
            "RUN" => self.run(line),
            "COPY" => self.copy(line),
            "EXPECT" => self.expect(line),
            _ => graphics(line, w, "clearing framebuffers of graphics pipelines"),
        }
    }

    pub(super) fn run(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "RUN";
        let (mut name, mut nl) = self.word(C, "a pipeline name")?;
        if name == "TIMED_EXECUTION" {
            // Amber times the dispatch; lockstep runs it untimed on the model and the device.
            (name, nl) = self.word(C, "a pipeline name after TIMED_EXECUTION")?;
        }
        let Some(pi) = self.pipeline_index(name) else {
            return err(nl, C, format!("unknown pipeline for RUN command: {name}"));
        };
        let (w, wl) = match self.next() {
            (Tok::Word(w), l) => (w, l),
            (_, l) => return err(l, C, "RUN command requires parameters"),
        };
        if matches!(w, "DRAW_RECT" | "DRAW_GRID" | "DRAW_ARRAY") {
            return graphics(wl, &format!("RUN {w}"), "draw commands");
        }
        let mut groups = [0u32; 3];
        for (i, g) in groups.iter_mut().enumerate() {
            let (t, l) = if i == 0 {
                (w, wl)
            } else {
                self.word(C, "workgroup counts X Y Z")?
            };
            *g = match Literal::parse(t) {
                Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => v as u32,
                _ => return err(l, C, format!("invalid parameter for RUN command: {t} (workgroup counts X Y Z, each a uint32)")),
            };
        }
        self.end_of_statement("RUN")?;
        Ok(Command::Run {
            line,
            pipeline: pi,
            groups,
        })
    }

    pub(super) fn copy(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "COPY";
        let (from, fl) = self.word(C, "a buffer name after COPY")?;
        if from == "TO" {
            return err(fl, C, "missing buffer name between COPY and TO");
        }
        let Some(fi) = self.buffer_index(from) else {
            return err(
                fl,
                C,
                format!("COPY origin buffer was not declared: {from}"),
            );
        };
        self.keyword(C, "TO")?;
        let (to, tl) = self.word(C, "a buffer name after TO")?;
        let Some(ti) = self.buffer_index(to) else {
            return err(
                tl,
                C,
                format!("COPY destination buffer was not declared: {to}"),
            );
        };
        if fi == ti {
            return err(tl, C, "COPY origin and destination buffers are identical");
        }
        let (a, b) = (&self.script.buffers[fi], &self.script.buffers[ti]);
        if a.data_type != b.data_type || a.layout != b.layout {
            return err(line, C, format!("COPY {from} TO {to}: both buffers must have the same data type ({} {} vs {} {})", a.data_type, a.layout, b.data_type, b.layout));
        }
        // Amber sizes the destination like the origin.
        if a.elements != b.elements {
            let (elements, size) = (a.elements, a.initial.len());
            let b = &mut self.script.buffers[ti];
            b.elements = elements;
            b.initial = vec![0; size];
        }
        self.end_of_statement("COPY")?;
        self.copies.push((fi, ti, line));
        Ok(Command::Copy {
            line,
            from: fi,
            to: ti,
        })
    }

    pub(super) fn expect(&mut self, line: usize) -> PResult<Command> {
        const C: &str = "EXPECT";
        let (name, nl) = self.word(C, "a buffer name")?;
        if matches!(
            name,
            "IDX" | "EQ_BUFFER" | "RMSE_BUFFER" | "EQ_HISTOGRAM_EMD_BUFFER"
        ) {
            return err(
                nl,
                C,
                format!("missing buffer name between EXPECT and {name}"),
            );
        }
        let Some(bi) = self.buffer_index(name) else {
            return err(
                nl,
                C,
                format!("unknown buffer name for EXPECT command: {name}"),
            );
        };
        let text = self.line_text(line);
        let (w, wl) = self.word(C, "IDX, EQ_BUFFER or RMSE_BUFFER")?;
        let kind = match w {
            "EQ_BUFFER" | "RMSE_BUFFER" => {
                let (other, ol) = self.word(C, &format!("a buffer name after {w}"))?;
                let Some(oi) = self.buffer_index(other) else {
                    return err(
                        ol,
                        C,
                        format!("unknown buffer name for EXPECT {w} command: {other}"),
                    );
                };
                let (a, b) = (&self.script.buffers[bi], &self.script.buffers[oi]);
                if a.data_type != b.data_type || a.layout != b.layout {
                    return err(ol, C, format!("EXPECT {w} command cannot compare buffers of differing format ({} {} vs {} {})", a.data_type, a.layout, b.data_type, b.layout));
                }
                if a.elements != b.elements {
                    return err(
                        ol,
                        C,
                        format!(
                            "EXPECT {w} command cannot compare buffers of different size: {} vs {}",
                            a.elements, b.elements
                        ),
                    );
                }
                let kind = if w == "EQ_BUFFER" {
                    ExpectKind::EqBuffer { other: oi }
                } else {
                    self.keyword(C, "TOLERANCE")?;
                    let (t, tl) = self.word(C, "a TOLERANCE value")?;
                    let tolerance = match Literal::parse(t) {
                        Some(v) if v.as_f64() >= 0.0 => v.as_f64(),
                        _ => {
                            return err(
                                tl,
                                C,
                                format!("invalid TOLERANCE for EXPECT RMSE_BUFFER: {t}"),
                            )
                        }
                    };
                    ExpectKind::RmseBuffer {
                        other: oi,
                        tolerance,
                    }
                };
                self.end_of_statement("EXPECT")?;
                kind
            }
            "EQ_HISTOGRAM_EMD_BUFFER" => return graphics(wl, C, "image histogram comparison"),
            "IDX" => self.expect_values(bi)?,
            _ => return err(wl, C, format!("missing IDX in EXPECT command (found {w})")),
        };
        Ok(Command::Expect(Expect {
            line,
            buffer: bi,
            kind,
            text,
        }))
    }

    /// `… IDX x y SIZE w h [TOLERANCE t…] EQ_RGB r g b | EQ_RGBA r g b a` after `IDX x`.
    fn probe(&mut self, bi: usize, x: u32, line: usize) -> PResult<ExpectKind> {
        const C: &str = "EXPECT";
        if self.script.buffers[bi].image.is_none() {
            // A BUFFER probed as pixels is a framebuffer of a graphics pipeline.
            return graphics(
                line,
                C,
                "probing the pixels of a BUFFER (a framebuffer: IDX x y SIZE w h EQ_RGB/EQ_RGBA)",
            );
        }
        // The y was read before SIZE: take it from the command's text again.
        let text = self.line_text(line);
        let words: Vec<&str> = text.split_whitespace().collect();
        let y = words
            .iter()
            .position(|w| *w == "IDX")
            .and_then(|i| words.get(i + 2))
            .and_then(|w| w.parse::<u32>().ok())
            .ok_or(())
            .or_else(|_| err(line, C, "invalid Y value in EXPECT command"))?;
        let w = self.uint(C, "a SIZE width")?;
        let h = self.uint(C, "a SIZE height")?;
        let mut tolerances = Vec::new();
        let (mut cmp, mut cl) = self.word(C, "EQ_RGB or EQ_RGBA")?;
        if cmp == "TOLERANCE" {
            while let Tok::Word(v) = self.lx.peek() {
                let Some(lit) = Literal::parse(v.trim_end_matches('%')) else {
                    break;
                };
                let percent = v.ends_with('%');
                self.next();
                tolerances.push(Tolerance::written(lit.as_f64(), percent));
            }
            (cmp, cl) = self.word(C, "EQ_RGB or EQ_RGBA")?;
        }
        let n = match cmp {
            "EQ_RGB" => 3,
            "EQ_RGBA" => 4,
            _ => {
                return err(
                    cl,
                    C,
                    format!("{cmp}: an image probe compares with EQ_RGB or EQ_RGBA"),
                )
            }
        };
        let mut rgba = Vec::new();
        for _ in 0..n {
            let (v, vl) = self.word(C, "a colour component (0 to 255)")?;
            match Literal::parse(v) {
                Some(l) if (0.0..=255.0).contains(&l.as_f64()) => rgba.push(l.as_f64()),
                _ => {
                    return err(
                        vl,
                        C,
                        format!("colour component {v} is not a number from 0 to 255"),
                    )
                }
            }
        }
        self.end_of_statement(C)?;
        Ok(ExpectKind::Probe {
            rect: [x, y, w, h],
            rgba,
            tolerances,
        })
    }

    pub(super) fn expect_values(&mut self, bi: usize) -> PResult<ExpectKind> {
        const C: &str = "EXPECT";
        let (x, xl) = self.word(C, "an IDX value")?;
        let offset = match Literal::parse(x) {
            Some(Literal::Int(v)) if (0..=u32::MAX as i128).contains(&v) => v as usize,
            _ => return err(xl, C, format!("invalid X value in EXPECT command: {x}")),
        };
        let mut t = self.next();
        let mut has_y = false;
        if let (Tok::Word(w), l) = t
            && let Some(Literal::Int(y)) = Literal::parse(w)
        {
            if y < 0 {
                return err(l, C, format!("invalid Y value in EXPECT command: {w}"));
            }
            has_y = true;
            t = self.next();
        }
        if t.0 == Tok::Word("SIZE") {
            if !has_y {
                return err(t.1, C, "invalid Y value in EXPECT command");
            }
            return self.probe(bi, offset as u32, t.1);
        }
        let mut tolerances = Vec::new();
        if t.0 == Tok::Word("TOLERANCE") {
            while let Tok::Word(w) = self.lx.peek() {
                let (num, pct) = match w.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (w, false),
                };
                let Some(v) = Literal::parse(num) else { break };
                let (_, l) = self.next();
                let percent = pct || {
                    if self.lx.peek() == Tok::Word("%") {
                        self.next();
                        true
                    } else {
                        false
                    }
                };
                if !(v.as_f64() >= 0.0 && v.as_f64().is_finite()) {
                    return err(l, C, format!("TOLERANCE {w} is not a finite number ≥ 0"));
                }
                tolerances.push(Tolerance::written(v.as_f64(), percent));
            }
            if tolerances.is_empty() {
                return err(t.1, C, "TOLERANCE specified but no tolerances provided");
            }
            if tolerances.len() > 4 {
                return err(t.1, C, "TOLERANCE has a maximum of 4 values");
            }
            t = self.next();
        }
        let comparator = match t {
            (Tok::Word(w), _) if Comparator::parse(w).is_some() => Comparator::parse(w).unwrap(),
            (t, l) => {
                return err(
                    l,
                    C,
                    format!("unexpected token in EXPECT command: {t} (EQ, NE, LT, LE, GT or GE)"),
                )
            }
        };
        if has_y {
            return err(t.1, C, "Y value not needed for non-color comparator");
        }
        if !tolerances.is_empty() && comparator != Comparator::Eq {
            return err(t.1, C, "TOLERANCE only available with EQ probes");
        }
        let buf = &self.script.buffers[bi];
        let scalar = buf.data_type.scalar;
        let mut values = Vec::new();
        loop {
            match self.next() {
                (Tok::Eol | Tok::Eos, _) => break,
                (Tok::Word(w), l) => values.push(self.literal(w, l, C, "EXPECT value", scalar)?),
            }
        }
        if values.is_empty() {
            return err(t.1, C, "missing comparison values for EXPECT command");
        }
        let buf = &self.script.buffers[bi];
        check_expect_range(buf, offset, values.len()).or_else(|m| err(xl, C, m))?;
        Ok(ExpectKind::Values {
            offset,
            tolerances,
            comparator,
            values,
        })
    }
}
