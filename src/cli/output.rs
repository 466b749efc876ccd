//! Writing to stdout: JSON, broken pipes.

use std::io::Write;

/// Writes `s` and a newline to stdout.
pub fn print_line(s: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}")?;
    out.flush()?;
    Ok(())
}

/// Writes `value` as pretty JSON to stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    print_line(&serde_json::to_string_pretty(value)?)
}

/// True when `e` is a closed stdout (`docfuse search … | head`): not an error.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
