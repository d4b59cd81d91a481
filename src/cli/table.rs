//! Plain-text tables with aligned columns.

/// Renders rows as a table: the first row is the header, columns padded to their widest cell,
/// a rule under the header.
///
/// ```
/// let t = lockstep::cli::table::render(&[vec!["a".into(), "bb".into()], vec!["ccc".into(), "d".into()]]);
/// assert_eq!(t, "a    bb\n---  --\nccc  d\n");
/// ```
pub fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0usize; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |r: &[String], out: &mut String| {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    };
    if let Some(h) = rows.first() {
        line(h, &mut out);
        let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
        line(&rule, &mut out);
    }
    for r in rows.iter().skip(1) {
        line(r, &mut out);
    }
    out
}
