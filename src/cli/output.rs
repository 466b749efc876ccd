//! Writing to stdout: JSON, broken pipes; capturing what a thread prints (a search
//! answered for another process, [`super::daemon`]).

/// Exit code: success with results.
pub const EXIT_OK: i32 = 0;
/// Exit code: ran fine, found nothing.
pub const EXIT_NO_HITS: i32 = 1;
/// Exit code: an error (bad input, missing or corrupt index…).
pub const EXIT_ERROR: i32 = 2;
/// Exit code of `index` and `refresh`: published, but some files could not be read (or
/// parsed): their last indexed text is kept, named in `partial`.
pub const EXIT_PARTIAL: i32 = 3;

/// The exit code of a published build: [`EXIT_PARTIAL`] when files could not be read.
pub fn build_exit(r: &crate::write::BuildReport) -> i32 {
    if r.partial.is_empty() {
        EXIT_OK
    } else {
        EXIT_PARTIAL
    }
}

use std::cell::RefCell;
use std::io::Write;

thread_local! {
    /// What this thread prints, when it answers for another process (stdout, stderr).
    static CAPTURE: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Runs `f` with everything this thread prints through [`print_line`] and [`print_err`]
/// kept instead of written; returns `f`'s value with the text for stdout and stderr.
pub fn captured<T>(f: impl FnOnce() -> T) -> (T, String, String) {
    /// Ends the capture, also when `f` panics.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            CAPTURE.with(|c| c.borrow_mut().take());
        }
    }
    CAPTURE.with(|c| *c.borrow_mut() = Some((String::new(), String::new())));
    let _reset = Reset;
    let value = f();
    let (out, err) = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (value, out, err)
}

/// Appends `s` and a newline to the capture's stdout (`err`: stderr); false when this
/// thread captures nothing.
fn to_capture(s: &str, err: bool) -> bool {
    CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some((out, e)) => {
            let to = if err { e } else { out };
            to.push_str(s);
            to.push('\n');
            true
        }
        None => false,
    })
}

/// Writes `s` and a newline to stdout.
pub fn print_line(s: &str) -> anyhow::Result<()> {
    if to_capture(s, false) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}")?;
    out.flush()?;
    Ok(())
}

/// Writes `s` and a newline to stderr (a note, not the answer).
pub fn print_err(s: &str) {
    if !to_capture(s, true) {
        eprintln!("{s}");
    }
}

pub use crate::chunk::{name_field, printable};

/// Writes `value` as pretty JSON to stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    print_line(&serde_json::to_string_pretty(value)?)
}

/// Writes `value` as one line of JSON to stdout (JSON Lines, for a stream of records).
pub fn print_json_line<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    print_line(&serde_json::to_string(value)?)
}

/// True when `e` is a closed stdout (`docfuse search … | head`): not an error.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The text of an error for the terminal: its message, then each cause not already
/// said in it (a message often quotes its I/O cause), with the `hint:` lines last.
pub fn error_text(e: &anyhow::Error) -> String {
    let top = e.to_string();
    let (head, hint) = match top.find("\nhint:") {
        Some(at) => (top[..at].to_string(), top[at..].to_string()),
        None => (top, String::new()),
    };
    let mut text = head;
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) && !hint.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text + &hint
}

#[cfg(test)]
mod error_text_tests {
    use super::error_text;

    #[test]
    fn a_cause_already_quoted_is_not_repeated_and_hints_come_last() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::from(crate::Error::io("read", std::path::Path::new("x"), io));
        assert_eq!(error_text(&e), "read `x`: No such file");
        let e = anyhow::anyhow!("outer\nhint: do this").context("context");
        assert_eq!(error_text(&e), "context: outer\nhint: do this");
    }
}
