//! Command-output blocks in hand-written Markdown: a README shows a command's real output between
//! two markers, and the generator refreshes what lies between them.
//!
//! ````text
//! <!-- lockstep-output: eval shuffle_down --size 8 --delta 1 -->
//! ```text
//! $ lockstep eval shuffle_down --size 8 --delta 1
//! … the output …
//! ```
//! <!-- /lockstep-output -->
//! ````

/// The opening marker's prefix; the command's arguments follow it, then ` -->`.
pub const OUTPUT_MARKER: &str = "<!-- lockstep-output:";
const END_MARKER: &str = "<!-- /lockstep-output -->";

/// Replaces the content of every output block of `text` with `$ lockstep ARGS` and what `run`
/// returns for `ARGS` (split at spaces). The text outside the blocks is kept as it is. An opening
/// marker without its closing one is an error naming the line.
pub fn refresh_output_blocks(
    text: &str,
    mut run: impl FnMut(&[String]) -> String,
) -> Result<String, String> {
    let mut out = String::new();
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((n, line)) = lines.next() {
        out.push_str(line);
        let t = line.trim();
        let Some(rest) = t.strip_prefix(OUTPUT_MARKER) else {
            continue;
        };
        let Some(cmd) = rest.strip_suffix("-->") else {
            return Err(format!(
                "line {}: an output marker must end with -->",
                n + 1
            ));
        };
        let args: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
        let mut closed = false;
        for (_, inner) in lines.by_ref() {
            if inner.trim() == END_MARKER {
                let output = run(&args);
                out.push_str("```text\n$ lockstep ");
                out.push_str(&args.join(" "));
                out.push('\n');
                out.push_str(&output);
                if !output.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("```\n");
                out.push_str(inner);
                closed = true;
                break;
            }
        }
        if !closed {
            return Err(format!(
                "line {}: output marker without a closing {END_MARKER}",
                n + 1
            ));
        }
    }
    Ok(out)
}
