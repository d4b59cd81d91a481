//! Arbitrary text through the Amber front ends (issue 20): `lockstep::amber::parse` picks
//! AmberScript (`#!amber`) or VkScript by the first line, as Amber does. Every input is a script
//! or one error / unsupported naming a line — never a panic — and a script it returns is
//! consistent: every buffer holds `elements × stride` bytes, every index a command or pipeline
//! holds names something that exists, every host write and EXPECT lies inside its buffer.
//!
//! Seed with the CTS scripts: `mkdir -p corpus/amber && cp $(find ../../shared/amber-corpus
//! -name '*.amber') corpus/amber/`, then `RUSTC_BOOTSTRAP=1 cargo fuzz run amber corpus/amber --
//! -max_total_time=600`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep::amber::{parse, Command, ExpectKind, ParseFailure, Script};

fn check(s: &Script) {
    for b in &s.buffers {
        let stride = b.element_layout().stride;
        assert_eq!(b.initial.len(), b.elements * stride, "buffer {}", b.name);
        if let Some(i) = b.image {
            assert_eq!(b.elements as u64, i.extent.texels(), "image {}", b.name);
            assert_eq!(stride as u32, i.format.texel_bytes(), "image {}", b.name);
        }
    }
    for p in &s.pipelines {
        assert!(p.shader < s.shaders.len());
        for b in &p.bindings {
            assert!(b.buffer < s.buffers.len());
        }
    }
    fn walk(s: &Script, cmds: &[Command]) {
        for c in cmds {
            match c {
                Command::Run { pipeline, .. } => assert!(*pipeline < s.pipelines.len()),
                Command::Copy { from, to, .. } => {
                    assert!(*from < s.buffers.len() && *to < s.buffers.len())
                }
                Command::Write {
                    buffer,
                    offset,
                    bytes,
                    ..
                } => assert!(*offset + bytes.len() <= s.buffers[*buffer].size()),
                Command::Expect(e) => {
                    assert!(e.buffer < s.buffers.len());
                    match &e.kind {
                        ExpectKind::EqBuffer { other } | ExpectKind::RmseBuffer { other, .. } => {
                            assert!(*other < s.buffers.len())
                        }
                        ExpectKind::Values { .. } => {}
                        ExpectKind::Probe { rgba, .. } => {
                            assert!(s.buffers[e.buffer].image.is_some());
                            assert!(rgba.len() == 3 || rgba.len() == 4);
                        }
                    }
                }
                Command::Repeat { commands, .. } => walk(s, commands),
            }
        }
    }
    walk(s, &s.commands);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse(text) {
        Ok(s) => check(&s),
        Err(ParseFailure::Error(e)) => assert!(e.line >= 1, "{e}"),
        Err(ParseFailure::Unsupported(u)) => assert!(u.line.is_none_or(|l| l >= 1), "{u}"),
    }
});
