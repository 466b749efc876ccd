//! The command line. One file per subcommand; this module parses arguments, sets up
//! logging on stderr, and turns outcomes into exit codes (0 hits, 1 no hits, 2 error).
//! Only this module prints to stdout.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! (the binary, `main.rs`, runs `cli::run` on mimalloc: builds allocate and free millions
//! of small strings) one file per subcommand (`graph.rs`, `handoff.rs`, `passage.rs` for
//! `read` among them) (`dashes.rs`: a query may start with `-`); `job.rs`: one refresh job
//! with the index's recorded settings (roots to refresh or add, roots to drop, a pack to
//! unpack first) — what `ingest` and `serve`'s `POST /v1/refresh` run — and `Recorded` (the
//! settings and roots an index records, read by `refresh` too); `pg.rs`: `--index
//! postgres://…` — readers open through `pgstore::open_reader` (what they print; servers
//! also start `pgstore::follow`), writers open a `pgstore::PgStore` (lock, migrations),
//! seed this host's writer folder when it is not at the database's published generation (a
//! build into `PgStore::seeding`: the folder only, nothing embedded), then run the command,
//! whose build goes into the `PgStore` (one database publish) — and print what was
//! published; `ingest.rs`: the NATS subscriber (async-nats; one event at a time, each a
//! job; bad messages reported and skipped); `daemon.rs`: the search socket of a running
//! server; `resident.rs`: `docfuse daemon`, which a hybrid search starts when no server
//! answers; the only module that prints to stdout

mod args;
mod build_run;
mod chunks;
mod daemon;
mod dashes;
mod eval;
mod feed;
mod graph;
mod handoff;
mod index;
mod ingest;
mod ingest_loop;
mod job;
mod lanes;
mod mcp;
mod output;
mod pack;
mod passage;
mod pg;
mod refresh;
mod resident;
mod search;
mod serve;
mod status;
mod verify;
mod worker;

use args::{Cli, Command};
use clap::Parser;

pub use output::{EXIT_ERROR, EXIT_NO_HITS, EXIT_OK};

/// Runs the CLI with the process arguments and returns the exit code.
pub fn run() -> i32 {
    let argv: Vec<String> = std::env::args().collect();
    let (args, moved) = dashes::query_dashes_moved(dashes::negative_values(argv.clone()));
    let note = dashes::moved_note(&args, &moved);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    if let Some(note) = note {
        eprintln!("{note}");
    }
    init_logging(cli.verbose);
    let outcome = match cli.command {
        Command::Index(a) => index::run(a),
        Command::Refresh(a) => refresh::run(a),
        Command::Search(a) if a.refresh && pg::is_db(&a.index) => Err(anyhow::anyhow!(
            "`search --refresh` does not apply to a PostgreSQL index: searches follow its published generation\nhint: run the writer (`docfuse refresh --index URL`) where the roots are"
        )),
        Command::Search(mut a) => match asks_a_server(&a).then(|| daemon::ask(&a.index, argv)) {
            Some(Some(code)) => Ok(code),
            asked => {
                a.start_daemon = asked.is_some();
                read(a, |a| &mut a.index, search_here)
            }
        },
        Command::Status(mut a) => pg::status_dir(&a.index).and_then(|d| {
            a.database = (d != a.index).then(|| a.index.clone());
            a.index = d;
            status::run(a)
        }),
        Command::Graph(a) => read(a, |a| &mut a.index, graph::run),
        Command::Handoff(a) => read(a, |a| &mut a.index, handoff::run),
        Command::Read(a) => read(a, |a| &mut a.index, passage::run),
        Command::Eval(a) => read(a, |a| &mut a.index, eval::run),
        Command::Chunks(a) => read(a, |a| &mut a.index, chunks::run),
        Command::Verify(a) => verify::run(a),
        Command::Serve(mut a) => pg::server_dir(&a.index, a.watch.watch).and_then(|d| {
            a.database = (d != a.index).then(|| a.index.clone());
            a.index = d;
            serve::run(a)
        }),
        Command::Mcp(mut a) => pg::server_dir(&a.index, a.watch.watch).and_then(|d| {
            a.database = d != a.index;
            a.index = d;
            mcp::run(a)
        }),
        Command::Pack(a) => pack::run(a),
        Command::Ingest(a) => ingest::run(a),
        Command::EmbedWorker(a) => worker::run(a),
        Command::Daemon(a) => resident::run(a),
    };
    match outcome {
        Ok(code) => code,
        Err(e) if output::is_broken_pipe(&e) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {}", output::error_text(&building_hint(e)));
            EXIT_ERROR
        }
    }
}

/// Whether a search may be answered by a running server of its index folder
/// ([`daemon`]): not with `--refresh`, `--no-daemon` or `DOCFUSE_NO_DAEMON`, nor on a
/// PostgreSQL index.
fn asks_a_server(a: &args::SearchArgs) -> bool {
    !a.refresh && !a.no_daemon && !pg::is_db(&a.index) && !daemon::disabled()
}

/// Answers a search in this process; when it loaded the model and may
/// ([`args::SearchArgs::start_daemon`]), starts a resident `docfuse daemon` for the next.
fn search_here(a: args::SearchArgs) -> anyhow::Result<i32> {
    let (code, loaded) = search::run(&a)?;
    if a.start_daemon && loaded {
        resident::start(&a.index);
    }
    Ok(code)
}

/// Runs a reading command; a `--index postgres://…` is replaced by this host's cache
/// folder, synced to the database's published generation first.
fn read<A>(
    mut a: A,
    index: fn(&mut A) -> &mut std::path::PathBuf,
    run: fn(A) -> anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    let dir = pg::reader_dir(index(&mut a))?;
    *index(&mut a) = dir;
    run(a)
}

/// "No index" while a first build of that folder is still running says so, for every
/// command (a search, status or server started right after `docfuse index`).
fn building_hint(e: anyhow::Error) -> anyhow::Error {
    use crate::retriever::RetrieveError;
    let dir = match (e.downcast_ref(), e.downcast_ref()) {
        (Some(crate::Error::NoIndex { dir }), _)
        | (_, Some(RetrieveError::Engine(crate::Error::NoIndex { dir }))) => dir,
        _ => return e,
    };
    match crate::generation::writer_lock_holder(dir) {
        Some(holder) => anyhow::anyhow!(
            "no docfuse index at `{d}` yet: a first build is running ({holder})\nhint: wait for it to finish; `docfuse refresh --index {d}` and `docfuse search --refresh` wait for it",
            d = dir.display()
        ),
        // a folder of documents given as the index: index it, into a folder of its own
        None => match crate::store::foreign_entry(dir) {
            Some(entry) => anyhow::anyhow!(
                "no docfuse index at `{d}`: it holds other files (`{entry}`), documents perhaps\nhint: `--index` names the index folder; to index `{d}`, run `docfuse index {d}` (the index goes to `.docfuse` here), then search without `--index`",
                d = dir.display()
            ),
            None => e,
        },
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("DOCFUSE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .try_init();
}
