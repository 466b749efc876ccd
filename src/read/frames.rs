//! The lines of a pasted stack trace or compiler diagnostic, told apart by their shape
//! in the common runtimes and compilers: frames (where the program was: a file and line,
//! a function of a library's internals, a compiler's source excerpt), headers
//! (`Traceback (most recent call last):`, `... 12 more`) and messages (what went wrong).
//! Read by [`super::focus`].

/// What one line of a query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line {
    Message,
    /// A stack frame, the source line or `^^^` marks under a Python frame, or a line of
    /// a compiler's source excerpt (`--> src/main.rs:5:14`, `4 |     let r1 = &mut s;`).
    Frame,
    /// A line every trace of its runtime holds (`Traceback (most recent call last):`,
    /// `stack backtrace:`, `During handling of the above exception…`, `... 12 more`).
    Header,
}

/// Lines that open or join traces, as they begin (after indentation and `|`).
const HEADERS: [&str; 8] = [
    "Traceback (most recent call last)",
    "stack backtrace:",
    "During handling of the above exception",
    "The above exception was the direct cause",
    "note: run with `RUST_BACKTRACE",
    "note: Some details are omitted",
    "Stack trace:",
    "Backtrace:",
];

/// What each of `lines` is: Python's `File "…", line N, in f` with the source line and
/// `^^^` marks under it (also inside an exception group's `|` margin); `at f (file:1:2)`
/// of JavaScript, Java, C# (`in C:\x\P.cs:line 12`) and Rust's `at ./src/x.rs:5:9`;
/// Rust's numbered `12: crate::module::function`; Ruby's `from app.rb:7:in`; PHP's `#0
/// /x.php(20)`; Go's `/src/x.go:42 +0x1d` and the function line above it.
pub(super) fn classify(lines: &[&str]) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    // the indentation of the last Python frame header, whose source line follows it
    let mut header_indent: Option<usize> = None;
    // a compiler diagnostic's location line: its source excerpt's lines are frames
    let anchored = lines.iter().any(|l| diagnostic_location(l.trim()));
    for line in lines {
        let t = line.trim_start_matches(|c: char| c == '|' || c.is_whitespace());
        let indent = line.len() - t.len();
        let python = t.starts_with("File \"") && t.contains("\", line ");
        let under_header = header_indent.is_some_and(|h| indent > h);
        let kind = if HEADERS.iter().any(|h| t.starts_with(h)) || java_more(t) {
            Line::Header
        } else if python || under_header || frame_shape(t) || anchored && excerpt(line.trim()) {
            Line::Frame
        } else {
            Line::Message
        };
        header_indent = match (python, under_header) {
            (true, _) => Some(indent),
            // a source line may run over several lines (`^^^` under it)
            (false, true) => header_indent,
            _ => None,
        };
        out.push(kind);
    }
    // Go: a function line (`main.main()`, `created by …`) above its file line
    for i in 0..out.len().saturating_sub(1) {
        if out[i] == Line::Message && out[i + 1] == Line::Frame && go_function(lines[i].trim()) {
            out[i] = Line::Frame;
        }
    }
    out
}

/// Whether trimmed line `t` has the shape of one frame line of some runtime.
fn frame_shape(t: &str) -> bool {
    let tokens: Vec<&str> = t.split_whitespace().collect();
    (t.contains('^') && t.chars().all(|c| "^~ ".contains(c)))
        || t.strip_prefix("at ").is_some_and(at_frame)
        || numbered_frame(t)
        || t.strip_prefix("from ").is_some_and(ruby_frame)
        || php_frame(&tokens)
        || pytest_frame(&tokens)
        // a bare location: Go's `/src/x.go:42 +0x1d`
        || (tokens.len() <= 2
            && tokens.first().is_some_and(|w| location(w) && w.contains(['/', '\\'])))
}

/// A compiler diagnostic's location: rustc's `--> src/main.rs:5:14` (`::: …` for a
/// second file), or gcc's and clang's `main.c:3:5: error: …`.
fn diagnostic_location(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix("--> ").or_else(|| t.strip_prefix("::: ")) {
        return rest.split_whitespace().next().is_some_and(location);
    }
    let mut tokens = t.split_whitespace();
    let (Some(place), Some(level)) = (tokens.next(), tokens.next()) else {
        return false;
    };
    place.ends_with(':')
        && location(place.trim_end_matches(':'))
        && matches!(level, "error:" | "warning:" | "note:" | "fatal" | "error")
}

/// A line of a compiler's source excerpt (rustc, and clang's and gcc's `4 | code` form),
/// trimmed: its location `--> src/main.rs:5:14`, `4 |     let r1 = &mut s;`, `|   ^^^
/// label`, `...`; not a Markdown table row (`| a | b |`). The message and its `= note:`
/// lines are not.
fn excerpt(t: &str) -> bool {
    if t.starts_with("--> ") || t.starts_with("::: ") {
        return diagnostic_location(t);
    }
    let gutter = t
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    let table_row = gutter.len() > 1 && gutter.ends_with('|');
    (gutter == "|" || gutter.starts_with("| ")) && !table_row || t == "..."
}

/// `at X`, `at X (location)`, `at X(location)`, `at async X (…)` or C#'s `at X in
/// C:\x\P.cs:line 12`: the location is the last token.
fn at_frame(rest: &str) -> bool {
    if let Some((_, n)) = rest.rsplit_once(":line ") {
        return digits(n.trim()) && rest.contains(" in ");
    }
    // Node's `at async Promise.all (index 0)`
    if rest
        .strip_suffix(')')
        .and_then(|r| r.rsplit_once("(index "))
        .is_some_and(|(_, n)| digits(n))
    {
        return true;
    }
    let last = rest.split_whitespace().last().unwrap_or("");
    let inner = last
        .rsplit_once('(')
        .map_or(last, |(_, l)| l)
        .trim_end_matches([')', ',']);
    matches!(
        inner,
        "<anonymous>" | "native" | "Native Method" | "Unknown Source"
    ) || location(inner)
}

/// Rust's numbered backtrace line: `12: crate::module::function`, `3: <Box<F> as
/// Fn<A>>::call`, `0: rust_begin_unwind`, or `0: 0x55f1c - name` (`RUST_BACKTRACE=full`).
fn numbered_frame(t: &str) -> bool {
    let Some((n, rest)) = t.split_once(": ") else {
        return false;
    };
    let one_symbol = !rest.contains(char::is_whitespace) && rest.contains(['_', ':']);
    digits(n)
        && (rest.contains("::") && !rest.contains(": ") || rest.starts_with("0x") || one_symbol)
}

/// Ruby's `from app.rb:7:in 'method'`.
fn ruby_frame(rest: &str) -> bool {
    let first = rest.split_whitespace().next().unwrap_or("");
    let parts: Vec<&str> = first.split(':').collect();
    matches!(parts.as_slice(), [file, line, "in", ..] if has_extension(file) && digits(line))
}

/// PHP's `#0 /app/x.php(20): f()`.
fn php_frame(tokens: &[&str]) -> bool {
    let [n, place, ..] = tokens else {
        return false;
    };
    let place = place.trim_end_matches(':');
    n.strip_prefix('#').is_some_and(digits)
        && place.ends_with(')')
        && place
            .trim_end_matches(')')
            .rsplit_once('(')
            .is_some_and(|(file, line)| has_extension(file) && digits(line))
}

/// pytest's `tests/test_x.py:12: in test_ssl`.
fn pytest_frame(tokens: &[&str]) -> bool {
    matches!(tokens, [place, "in", ..] if place.ends_with(':') && location(place.trim_end_matches(':')))
}

/// Go's function line: `main.main()`, `pkg.(*T).m(0xc000010000)`, `created by …`.
fn go_function(t: &str) -> bool {
    t.starts_with("created by ")
        || (!t.contains(char::is_whitespace)
            && t.ends_with(')')
            && t.contains('.')
            && t.contains('('))
}

/// Whether token `w` names a place in a source file: `file:LINE` or `file:LINE:COL`,
/// the file with an extension or a path (`node:internal/x:1:2`).
fn location(w: &str) -> bool {
    let w = w.trim_matches(|c| matches!(c, '(' | ')' | ',' | '[' | ']'));
    let mut parts = w.rsplitn(3, ':');
    let last = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    let file = |f: &str| has_extension(f) || f.contains(['/', '\\']);
    match rest.as_slice() {
        [f] => digits(last) && file(f),
        // `file:LINE:COL`, or a Windows `C:\x\y.rs:LINE`
        [line, f] => digits(last) && (digits(line) && file(f) || file(line)),
        _ => false,
    }
}

/// Whether `s` ends in a file extension holding a letter (`x.rs`, `/a/b.py`; not
/// `127.0.0.1` or `1.5`).
fn has_extension(s: &str) -> bool {
    s.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `... 12 more` of a Java trace.
fn java_more(t: &str) -> bool {
    t.strip_prefix("... ")
        .and_then(|r| r.strip_suffix(" more"))
        .is_some_and(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Line::{Frame as F, Header as H, Message as M};

    fn check(cases: &[(&str, Line)]) {
        let lines: Vec<&str> = cases.iter().map(|c| c.0).collect();
        for ((line, want), got) in cases.iter().zip(classify(&lines)) {
            assert_eq!(got, *want, "{line:?}");
        }
    }

    #[test]
    fn frames_of_the_common_runtimes() {
        check(&[
            ("Traceback (most recent call last):", H),
            ("  File \"/app/main.py\", line 42, in <module>", F),
            ("    r = client.get(url)", F),
            ("        ^^^^^^^^^^^^^^^", F),
            ("    ~~~~~^^^^^", F),
            ("httpx.ReadTimeout: The read operation timed out", M),
            (
                "During handling of the above exception, another exception occurred:",
                H,
            ),
            ("  | File \"/app/x.py\", line 3, in f", F),
            (
                "TypeError: Cannot read properties of undefined (reading 'map')",
                M,
            ),
            ("    at render (/app/src/List.jsx:12:9)", F),
            (
                "    at Module._compile (node:internal/modules/cjs/loader:1105:14)",
                F,
            ),
            ("    at async Promise.all (index 0)", F),
            ("    at new Promise (<anonymous>)", F),
            ("\tat com.example.Main.run(Main.java:31)", F),
            ("\t... 12 more", H),
            ("Caused by: java.io.IOException: Broken pipe", M),
            ("   at P.Main() in C:\\src\\P.cs:line 12", F),
            ("thread 'main' panicked at src/main.rs:5:9:", M),
            ("stack backtrace:", H),
            ("   7: std::rt::lang_start_internal", F),
            ("   3: <Box<F> as Fn<A>>::call", F),
            ("   0: 0x55f1c2 - backtrace::capture", F),
            ("   0: rust_begin_unwind", F),
            ("tests/test_ssl.py:12: in test_ssl", F),
            ("1: install", M),
            ("             at ./library/std/src/rt.rs:174:5", F),
            ("from app.rb:7:in `run'", F),
            ("#0 /var/www/x.php(20): f()", F),
            ("goroutine 1 [running]:", M),
            ("main.main()", F),
            ("\t/home/u/go/src/app/main.go:42 +0x1d", F),
            (
                "error[E0499]: cannot borrow `s` as mutable more than once at a time",
                M,
            ),
            (" --> src/main.rs:5:14", F),
            ("  |", F),
            ("4 |     let r1 = &mut s;", F),
            (
                "  |              ------ first mutable borrow occurs here",
                F,
            ),
            ("...", F),
            ("  = help: consider cloning the value", M),
        ]);
        // without a diagnostic's location line, a gutter is not an excerpt
        check(&[
            ("| name | value |", M),
            ("| a | b |", M),
            ("4 | step four", M),
        ]);
    }

    #[test]
    fn errors_and_questions_that_are_not_frames() {
        check(&[
            ("main.c:3:5: error: expected ';' before '}' token", M),
            ("error[E0382]: borrow of moved value: `v`", M),
            ("  = note: move occurs because `v` has type `Vec<i32>`", M),
            (
                "src/a.ts(3,5): error TS2322: Type 'string' is not assignable",
                M,
            ),
            ("FAILED tests/test_x.py::test_y - AssertionError", M),
            ("at least I tried (see foo.rs:3) and it failed", M),
            ("at https://127.0.0.1:8080 it works", M),
            ("api.example.com:443", M),
            ("10.0.0.5:5432", M),
            ("~~~", M),
            ("- item: value", M),
            ("version = \"1.2.3\"", M),
        ]);
    }
}
