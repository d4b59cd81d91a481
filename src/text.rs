//! Plain-text helpers shared by the reports and the CLI: aligned tables and UTC dates.
//!
//! A neutral module below every layer that prints (`conform`, `reconverge`, `docs`, `cli`), so that
//! none of them reaches into another for formatting.

/// Renders rows as a table: the first row is the header, columns padded to their widest cell,
/// a rule under the header.
///
/// ```
/// let t = lockstep::text::table(&[vec!["a".into(), "bb".into()], vec!["ccc".into(), "d".into()]]);
/// assert_eq!(t, "a    bb\n---  --\nccc  d\n");
/// ```
pub fn table(rows: &[Vec<String>]) -> String {
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

/// Today's date (UTC) as `YYYY-MM-DD`.
#[cfg(feature = "vulkan")]
pub(crate) fn utc_date() -> String {
    civil(now_secs()).0
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
#[cfg(feature = "vulkan")]
pub(crate) fn utc_timestamp() -> String {
    let (date, rem) = civil(now_secs());
    format!(
        "{date}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(feature = "vulkan")]
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The civil date `YYYY-MM-DD` of `secs` since 1970-01-01 UTC (Howard Hinnant's algorithm), and
/// the seconds into that day.
///
/// ```
/// // 2026-11-22 is day 20_779 of the epoch.
/// assert_eq!(lockstep::text::civil(20_779 * 86_400 + 3_661), ("2026-11-22".to_string(), 3_661));
/// assert_eq!(lockstep::text::civil(0).0, "1970-01-01");
/// assert_eq!(lockstep::text::civil(951_782_400).0, "2000-02-29"); // a leap day
/// ```
pub fn civil(secs: u64) -> (String, u64) {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (format!("{y:04}-{m:02}-{d:02}"), rem)
}

/// Text for XML (JUnit reports): the five markup characters escaped, and the control characters
/// XML 1.0 forbids even escaped written as `\u{…}`.
///
/// ```
/// assert_eq!(lockstep::text::xml_escape("a<b & 'c' \u{1}"), "a&lt;b &amp; &apos;c&apos; \\u{1}");
/// ```
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&apos;",
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {
                out += &format!("\\u{{{:x}}}", c as u32)
            }
            c => out.push(c),
        }
    }
    out
}
