//! A search query may start with `-` (`docfuse search --torch-backend`): words of a
//! `search` command line that look like options but are none of its options are moved
//! after a `--`, so clap reads them as the query. A word within a typo of an option
//! (`--limt` for `--limit`) stays an option, so clap refuses it and suggests the right one.

use clap::CommandFactory;

/// `args` with every unknown `-word` of a `search` command moved into the query.
pub fn query_dashes(args: Vec<String>) -> Vec<String> {
    query_dashes_moved(args).0
}

/// [`query_dashes`], and the `-words` it moved into the query (those written before
/// any `--` of the command line), for a note that says so.
pub fn query_dashes_moved(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    // `search` must be the subcommand: only global flags may come before it.
    let Some(at) = args
        .iter()
        .skip(1)
        .position(|a| !is_global_flag(a))
        .map(|i| i + 1)
        .filter(|&i| args[i] == "search")
    else {
        return (args, Vec::new());
    };
    let cmd = super::args::Cli::command();
    let Some(search) = cmd.find_subcommand("search") else {
        return (args, Vec::new());
    };
    let mut known: Vec<(String, bool)> = Vec::new();
    for a in search.get_arguments() {
        let takes = a.get_action().takes_values();
        if let Some(l) = a.get_long() {
            known.push((format!("--{l}"), takes));
        }
        if let Some(s) = a.get_short() {
            known.push((format!("-{s}"), takes));
        }
    }
    for (g, v) in [
        ("--verbose", false),
        ("-v", false),
        ("-vv", false),
        ("--help", false),
        ("-h", false),
    ] {
        known.push((g.to_string(), v));
    }
    let mut head: Vec<String> = args[..=at].to_vec();
    let mut words: Vec<String> = Vec::new();
    let mut moved: Vec<String> = Vec::new();
    let mut rest = args[at + 1..].iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            words.extend(rest.by_ref().cloned());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            words.push(a.clone());
            continue;
        }
        // `-vvv`: the global verbosity flag, however many `v`s
        if is_global_flag(a) {
            head.push(a.clone());
            continue;
        }
        let name = a.split('=').next().unwrap_or(a);
        // `-n3`: a short option with its value attached
        let attached = !a.starts_with("--")
            && a.len() > 2
            && known
                .iter()
                .any(|(k, takes)| *takes && k.len() == 2 && a.starts_with(k.as_str()));
        if attached {
            head.push(a.clone());
            continue;
        }
        match known.iter().find(|(k, _)| k == name) {
            Some((_, takes)) => {
                head.push(a.clone());
                if *takes && !a.contains('=') {
                    if let Some(v) = rest.next() {
                        head.push(v.clone());
                    }
                }
            }
            None if known.iter().any(|(k, _)| is_typo_of(name, k)) => head.push(a.clone()),
            None => {
                if looks_like_an_option(a) {
                    moved.push(a.clone());
                }
                words.push(a.clone());
            }
        }
    }
    if !words.is_empty() {
        head.push("--".into());
        head.extend(words);
    }
    (head, moved)
}

/// The note for `-words` a search moved into its query (`-k` for `-n`, say), so a
/// mistaken option is not searched silently: what was searched, and the command line
/// that searches it as written without the note (`args`, [`query_dashes`]'s result).
/// `None` when none was moved.
pub fn moved_note(args: &[String], moved: &[String]) -> Option<String> {
    let first = moved.first()?;
    let names = moved
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let is = match moved.len() {
        1 => "is not an option",
        _ => "are not options",
    };
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let words = args.get(split + 1..).unwrap_or(&[]);
    let query = words.join(" ");
    // `-k 4`, `--top 3`: a number after a moved word was most likely a limit
    let limit = words
        .windows(2)
        .any(|w| moved.contains(&w[0]) && w[1].parse::<f64>().is_ok());
    let command: Vec<String> = std::iter::once("docfuse".to_string())
        .chain(args.iter().skip(1).map(|a| shell_word(a)))
        .collect();
    Some(format!(
        "note: {names} {is} of `docfuse search`: searched for `{query}`{}\n\
         hint: to search for `{first}` as written, without this note: `{}`",
        match limit {
            true => " (`-n`/`--limit` sets how many results)",
            false => "",
        },
        command.join(" ")
    ))
}

/// `word` as a shell would need it typed: single-quoted unless every character is one
/// no shell reads specially.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "-_./:=@,+%".contains(c);
    match !word.is_empty() && word.chars().all(plain) {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

/// A word shaped like an option (`-k`, `--top`, `--top=3`), as one mistyped would be;
/// not query text that starts with a dash (`-> impl Trait`, `-1`, `--`).
fn looks_like_an_option(word: &str) -> bool {
    let name = word.split('=').next().unwrap_or(word);
    let bare = name.trim_start_matches('-');
    (1..=2).contains(&(name.len() - bare.len()))
        && bare.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && bare
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `args` with a negative number given to an option that takes a value joined to it
/// (`--limit -1` → `--limit=-1`), on any subcommand: clap then says the value is
/// invalid, instead of calling `-1` an unknown argument and suggesting `-- -1`.
pub fn negative_values(mut args: Vec<String>) -> Vec<String> {
    let negative = |v: &str| {
        v.strip_prefix('-')
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    // the command tree is built only when a negative number is there to place
    if !args.iter().any(|a| negative(a)) {
        return args;
    }
    let Some(at) = args
        .iter()
        .skip(1)
        .position(|a| !is_global_flag(a))
        .map(|i| i + 1)
    else {
        return args;
    };
    let cmd = super::args::Cli::command();
    let Some(sub) = cmd.find_subcommand(&args[at]) else {
        return args;
    };
    let takes_value = |a: &str| {
        sub.get_arguments().any(|o| {
            o.get_action().takes_values()
                && (o
                    .get_long()
                    .is_some_and(|l| a.strip_prefix("--") == Some(l))
                    || o.get_short().is_some_and(|s| a == format!("-{s}")))
        })
    };
    let mut i = at + 1;
    while i + 1 < args.len() {
        if args[i] == "--" {
            break;
        }
        if takes_value(&args[i]) && negative(&args[i + 1]) {
            let value = args.remove(i + 1);
            args[i] = format!("{}={value}", args[i]);
        }
        i += 1;
    }
    args
}

/// A flag docfuse accepts before its subcommand.
fn is_global_flag(a: &str) -> bool {
    a == "--verbose" || (a.len() > 1 && a.starts_with('-') && a[1..].bytes().all(|b| b == b'v'))
}

/// `word` is within a typo of option `known`: optimal string alignment distance at most one edit per
/// four characters (at least one; a swap of two neighbours is one edit), dashes aside.
fn is_typo_of(word: &str, known: &str) -> bool {
    let (w, k) = (word.trim_start_matches('-'), known.trim_start_matches('-'));
    if w.is_empty() || k.len() < 2 {
        return false;
    }
    strsim::osa_distance(w, k) <= (k.chars().count() / 4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_negative_number_is_an_options_value() {
        assert_eq!(
            negative_values(v(&["docfuse", "search", "--limit", "-1", "q"])),
            v(&["docfuse", "search", "--limit=-1", "q"])
        );
        assert_eq!(
            negative_values(v(&["docfuse", "read", "a.md", "--start-line", "-3"])),
            v(&["docfuse", "read", "a.md", "--start-line=-3"])
        );
        // a flag takes no value; after `--` everything is the query
        assert_eq!(
            negative_values(v(&["docfuse", "search", "--json", "-1"])),
            v(&["docfuse", "search", "--json", "-1"])
        );
        assert_eq!(
            negative_values(v(&["docfuse", "search", "--", "--limit", "-1"])),
            v(&["docfuse", "search", "--", "--limit", "-1"])
        );
    }

    #[test]
    fn unknown_dash_words_join_the_query() {
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "--torch-backend"])),
            v(&["docfuse", "search", "--", "--torch-backend"])
        );
        assert_eq!(
            query_dashes(v(&[
                "docfuse",
                "search",
                "--json",
                "-n",
                "3",
                "--no-deps",
                "flag"
            ])),
            v(&[
                "docfuse",
                "search",
                "--json",
                "-n",
                "3",
                "--",
                "--no-deps",
                "flag"
            ])
        );
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "publish", "--json"])),
            v(&["docfuse", "search", "--json", "--", "publish"])
        );
        assert_eq!(
            query_dashes(v(&["docfuse", "index", "--x"])),
            v(&["docfuse", "index", "--x"])
        );
        // a typo of an option stays an option (clap refuses it with a suggestion)
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "--limt", "3", "tasks"])),
            v(&["docfuse", "search", "--limt", "--", "3", "tasks"])
        );
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "--jsno", "x"])),
            v(&["docfuse", "search", "--jsno", "--", "x"])
        );
        // a short option with its value attached stays an option
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "-n3", "--no-deps"])),
            v(&["docfuse", "search", "-n3", "--", "--no-deps"])
        );
        // `search` as another command's argument changes nothing; global flags may lead
        let other = v(&[
            "docfuse",
            "index",
            "--index",
            "search",
            "docs",
            "--no-embeddings",
        ]);
        assert_eq!(query_dashes(other.clone()), other);
        assert_eq!(
            query_dashes(v(&["docfuse", "-vv", "search", "--x"])),
            v(&["docfuse", "-vv", "search", "--", "--x"])
        );
        assert_eq!(
            query_dashes(v(&["docfuse", "search", "--", "-a", "--json"])),
            v(&["docfuse", "search", "--", "-a", "--json"])
        );
    }

    #[test]
    fn the_dash_words_moved_into_a_query_are_named() {
        let (args, moved) = query_dashes_moved(v(&["docfuse", "search", "-k", "4", "cargo fix"]));
        assert_eq!(moved, v(&["-k"]));
        let note = moved_note(&args, &moved).unwrap_or_default();
        assert!(note.contains("`-k` is not an option"), "{note}");
        assert!(note.contains("searched for `-k 4 cargo fix`"), "{note}");
        assert!(note.contains("--limit"), "{note}");
        assert!(
            note.contains("`docfuse search -- -k 4 'cargo fix'`"),
            "{note}"
        );
        // options stay before `--` in the line to type; no limit hint without a number
        let (args, moved) =
            query_dashes_moved(v(&["docfuse", "search", "--torch-backend", "--json"]));
        let note = moved_note(&args, &moved).unwrap_or_default();
        assert!(
            note.contains("`docfuse search --json -- --torch-backend`"),
            "{note}"
        );
        assert!(!note.contains("--limit"), "{note}");
        // words after `--` are the query as written: nothing to note
        let (args, moved) = query_dashes_moved(v(&["docfuse", "search", "--", "-k", "4"]));
        assert!(moved.is_empty());
        assert_eq!(moved_note(&args, &moved), None);
        // options, values, typos of options and verbosity are not moved
        for line in [
            v(&["docfuse", "search", "-n", "3", "--json", "x"]),
            v(&["docfuse", "search", "-vvvv", "x"]),
            v(&["docfuse", "search", "--limt", "3", "x"]),
        ] {
            assert!(query_dashes_moved(line.clone()).1.is_empty(), "{line:?}");
        }
        // query text that starts with a dash is searched without a note
        let (args, moved) = query_dashes_moved(v(&["docfuse", "search", "-> impl Trait"]));
        assert!(moved.is_empty(), "{moved:?}");
        assert_eq!(args.last().map(String::as_str), Some("-> impl Trait"));
        let (args, moved) = query_dashes_moved(v(&["docfuse", "search", "--x", "-> impl", "a>b"]));
        let note = moved_note(&args, &moved).unwrap_or_default();
        assert!(
            note.contains("`docfuse search -- --x '-> impl' 'a>b'`"),
            "{note}"
        );
        let (args, moved) =
            query_dashes_moved(v(&["docfuse", "search", "--top", "3", "--no-deps", "x"]));
        assert_eq!(moved, v(&["--top", "--no-deps"]));
        let note = moved_note(&args, &moved).unwrap_or_default();
        assert!(note.contains("are not options"), "{note}");
    }
}
