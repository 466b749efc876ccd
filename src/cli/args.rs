//! Raw command-line flags (clap). Validation into settings happens in each subcommand.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// docfuse: search a folder of documentation and get back sections with their heading
/// path, `path:line` and an explainable BM25F score.
#[derive(Debug, Parser)]
#[command(name = "docfuse", version, about, long_about = None)]
pub struct Cli {
    /// More logging on stderr (-v info, -vv debug); `DOCFUSE_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build (or rebuild) the index from folders of .md, .markdown, .mdx and .txt files,
    /// OpenAPI/Swagger specs (openapi.json|yaml, swagger.json|yaml, *.openapi.yaml, …: one
    /// section per operation) and the `nav` of an mkdocs.yml, read as links.
    Index(IndexArgs),
    /// Bring the index up to date with its roots: re-embed only new or changed chunks.
    Refresh(RefreshArgs),
    /// Search the index and print the best sections.
    Search(SearchArgs),
    /// Say whether the index is fresh against the files on disk, and why not (exit 0
    /// either way; `--exit-code` exits 1 when stale).
    Status(StatusArgs),
    /// Show the documentation graph: pages by PageRank, or one page's links, mentions
    /// and covers with the line each is written on.
    Graph(GraphArgs),
    /// Before working on a document or folder: where to start reading, what to read
    /// before editing, where to edit and which checks apply.
    Handoff(HandoffArgs),
    /// Print a passage: a search result's whole section by its id, or a file's lines
    /// (`path`, `path:12`, `path:12-40`), verified against the index, page by page.
    Read(ReadArgs),
    /// Measure ranking quality on labelled questions (nDCG@10, recall@k, MRR@10).
    Eval(EvalArgs),
    /// Print every indexed chunk as JSON Lines (id, path, lines, heading path, text).
    Chunks(ChunksArgs),
    /// Check every file of the index against the sha256 its manifest recorded.
    Verify(VerifyArgs),
    /// Serve the HTTP API (search, passages, handoffs, status) on a loopback address.
    Serve(ServeArgs),
    /// Serve the MCP tools (search_docs, read_passage, read_document, handoff, index_status)
    /// on stdin/stdout.
    Mcp(McpArgs),
    /// Write a docs pack: a folder's documentation files and API specs, with a pack.json
    /// (repository code, version, file list with sha256), as one .tar.gz for `index --pack`.
    Pack(PackArgs),
    /// Ingest docs packs as services come and go on NATS: `service.register` (with the
    /// `docs_pack` capability) fetches and indexes the service's pack, `service.unregister`
    /// removes it, `gateway.online` (and the start) pulls every known pack again.
    Ingest(IngestArgs),
    /// Embed the inputs a PostgreSQL index's writer left unembedded (`--max-chunks`), on
    /// any number of hosts: each batch is claimed with `FOR UPDATE SKIP LOCKED`, embedded
    /// and written by embedding hash; the writer's next refresh publishes the vectors.
    EmbedWorker(EmbedWorkerArgs),
    /// Keep an index folder and its embedding model loaded, answering one-off searches of
    /// that index (a hybrid `search` starts one by itself; see `DOCFUSE_DAEMON_IDLE`).
    Daemon(DaemonArgs),
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Index folder (a folder index only: a PostgreSQL index's searches answer by themselves).
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Exit after this many seconds without a search (default: `DOCFUSE_DAEMON_IDLE`, else
    /// 300); 0: never exit for idleness.
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// NATS server to subscribe to, e.g. `nats://127.0.0.1:4222`.
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// Index folder (created by the first pack ingested when there is none), or a
    /// PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME] (each event publishes
    /// into it as this host's writer).
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Largest pack accepted, in bytes (compressed).
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    pub max_pack_bytes: u64,
    /// Also fetch pack URLs naming this host (name or IP address as written in the URL)
    /// when it resolves to a loopback or private address (repeatable). Default: public
    /// addresses only.
    #[arg(long, value_name = "HOST")]
    pub allow_pack_host: Vec<String>,
    /// Most bytes all packs of the index may take on disk together.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 30)]
    pub max_packs_total_bytes: u64,
    /// Do not embed (lexical only); default: embed when the index has vectors (or, for a
    /// new index, always).
    #[arg(long)]
    pub no_embeddings: bool,
    /// Embed at most this many chunks per event (the rest wait for a later event). With
    /// a PostgreSQL index, what is left is queued for `docfuse embed-worker`s, and their
    /// vectors are published as they arrive (checked every 10 s); `--max-chunks 0` leaves
    /// all embedding to them.
    #[arg(long, value_name = "N")]
    pub max_chunks: Option<u64>,
    /// Packs fetched at once, 1 to 64 (one per service). Events of different services
    /// are handled side by side: a slow pack URL holds up only its own service's later
    /// events (one service's events are always applied in the order they were published).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub fetches: u64,
    /// A pack fetch taking longer than this many seconds (0.1 to 3600) fails (reported;
    /// the service's next event is handled).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_seconds)]
    pub fetch_timeout: f64,
    /// Print one JSON line per event handled on stdout (default: a line of text).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EmbedWorkerArgs {
    /// The PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long)]
    pub index: PathBuf,
    /// Inputs claimed, embedded and written per transaction.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub batch: u64,
    /// Threads that embed (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// Exit when nothing is waiting (default: wait for more, checking every `--poll`).
    #[arg(long)]
    pub once: bool,
    /// Seconds between checks of an empty queue (and between tries of an unreachable
    /// database), from 0.1 to 3600.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, value_parser = parse_seconds)]
    pub poll: f64,
    /// Print one JSON line per batch and a summary on stdout (default: text on stderr).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PackArgs {
    /// Folder whose documentation goes into the pack (walked as `index` walks a root).
    #[arg(value_name = "ROOT")]
    pub root: PathBuf,
    /// The pack to write (a .tar.gz).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Repository code: 1 to 64 of a-z 0-9 . _ - (default: from the folder's name).
    #[arg(long, value_name = "CODE")]
    pub repo: Option<String>,
    /// Version recorded in pack.json.
    #[arg(long, value_name = "VERSION", default_value = "0")]
    pub version: String,
    /// Print pack.json's summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// The PostgreSQL index's URL when `index` is its local copy: refresh jobs write to
    /// the database (this host as its writer), and the server follows its publishes.
    #[arg(skip)]
    pub database: Option<PathBuf>,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:7700")]
    pub addr: std::net::SocketAddr,
    /// Allow listening on a non-loopback address (the API has no authentication: put a
    /// proxy in front that authenticates; `--max-connections` and
    /// `--header-timeout-ms` bound what idle and slow clients hold).
    #[arg(long)]
    pub allow_remote: bool,
    /// Answer `503 timeout` to a request taking longer than this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 65_536)]
    pub max_body_bytes: usize,
    /// Keep every response under this many tokens (≈ bytes / 4): passages are cut at a
    /// line and paged.
    #[arg(long, value_name = "N", default_value_t = crate::retriever::DEFAULT_RESPONSE_TOKENS)]
    pub max_response_tokens: usize,
    /// Also accept requests whose `Host` (or `Origin`) names this host, e.g. the name a
    /// reverse proxy forwards (repeatable). `localhost`, `127.0.0.1` and `::1` always are.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Searches that may wait while every core is busy (and, apart, hybrid questions
    /// waiting to be embedded); one more is answered `503 overloaded` with `Retry-After:
    /// 1` at once.
    #[arg(long, value_name = "N", default_value_t = crate::retriever::DEFAULT_MAX_QUEUED)]
    pub max_queued: usize,
    /// Most connections open at once (lowered to what the open-file limit allows); one
    /// more is answered `503 overloaded` and closed.
    #[arg(long, value_name = "N", default_value_t = 512)]
    pub max_connections: usize,
    /// Close a connection whose request head is not complete within this many
    /// milliseconds; also how long a kept-alive connection may wait idle for its next
    /// request.
    #[arg(long, value_name = "MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// Close a connection when writing its answer makes no progress for this many
    /// milliseconds (a client that stopped reading).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub write_timeout_ms: u64,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Set when `index` is the local copy of a PostgreSQL index (no search socket: a
    /// search of a database index answers by itself).
    #[arg(skip)]
    pub database: bool,
    /// Keep every tool result under this many tokens (≈ bytes / 4): passages are cut at
    /// a line and paged.
    #[arg(long, value_name = "N", default_value_t = crate::retriever::DEFAULT_RESPONSE_TOKENS)]
    pub max_response_tokens: usize,
    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ChunksArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Folders (or files) to index.
    #[arg(value_name = "ROOT", required_unless_present_any = ["jsonl", "pack"])]
    pub roots: Vec<PathBuf>,
    /// Ingest a docs pack (a file or an http(s) URL, from `docfuse pack`) as the root
    /// `pack:CODE`: verified whole, unpacked into INDEX/packs/CODE, indexed with the
    /// index's other roots kept. Unchanged files are not written, read or embedded again.
    #[arg(long, value_name = "FILE_OR_URL", conflicts_with = "jsonl")]
    pub pack: Option<String>,
    /// Largest pack accepted, in bytes (compressed).
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, requires = "pack")]
    pub max_pack_bytes: u64,
    /// Also fetch a pack URL naming this host (name or IP address as written in the URL)
    /// when it resolves to a loopback or private address (repeatable). Default: public
    /// addresses only.
    #[arg(long, value_name = "HOST", requires = "pack")]
    pub allow_pack_host: Vec<String>,
    /// Most bytes all packs of the index may take on disk together.
    #[arg(long, value_name = "BYTES", default_value_t = 4 << 30, requires = "pack")]
    pub max_packs_total_bytes: u64,
    /// Index a JSONL corpus of {"_id", "title", "text"} records (BEIR format) instead of folders.
    #[arg(long, value_name = "FILE", conflicts_with = "roots")]
    pub jsonl: Option<PathBuf>,
    /// Chunk budget in tokens (≈ bytes / 4); longer sections are cut at blank lines.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
    /// BM25F term-frequency saturation k1 (> 0).
    #[arg(long)]
    pub k1: Option<f32>,
    /// BM25F length normalisation b (0..=1).
    #[arg(long)]
    pub b: Option<f32>,
    /// Field weights, e.g. `title=4,headings=3,body=1` (unnamed fields keep their default).
    #[arg(long, value_name = "FIELD=W,...")]
    pub weights: Option<String>,
    /// Collections with at least this many chunks also get an HNSW graph (default 50000).
    #[arg(long, value_name = "N")]
    pub hnsw_min_vectors: Option<usize>,
    /// Files larger than this many bytes are indexed only up to it.
    #[arg(long, value_name = "BYTES")]
    pub max_file_bytes: Option<u64>,
    /// Build a lexical-only index: no model is loaded, no chunk is embedded.
    #[arg(long)]
    pub no_embeddings: bool,
    /// Also index hidden files and folders (names starting with `.`), as `rg --hidden`;
    /// version-control folders stay skipped. Recorded: refreshes keep it.
    #[arg(long)]
    pub hidden: bool,
    /// Ignore `.gitignore`/`.ignore` rules and walk dependency and build folders
    /// (`node_modules`, `target`, …) too, as `rg --no-ignore`. Recorded: refreshes keep it.
    #[arg(long)]
    pub no_ignore: bool,
    /// Index the repository's code too: source files (Rust, TypeScript/TSX,
    /// JavaScript/JSX, Python, Go) as module entries with one passage per declared item,
    /// and package manifests (`package.json`, `Cargo.toml`, `pyproject.toml`, `go.mod`)
    /// as package entries. Recorded: refreshes keep it.
    #[arg(long)]
    pub sources: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Settings of one build or refresh run.
#[derive(Debug, Default, Clone, Args)]
pub struct RunArgs {
    /// Embed at most N chunks in this run; the rest stays lexical-only ("pending").
    #[arg(long, value_name = "N")]
    pub max_chunks: Option<u64>,
    /// Stop embedding after S seconds; the rest stays lexical-only ("pending").
    #[arg(long, value_name = "S")]
    pub max_seconds: Option<f64>,
    /// Write a new generation even when nothing changed (and overwrite an index written
    /// by a newer docfuse).
    #[arg(long)]
    pub force: bool,
    /// Fail at once when another docfuse is writing the index (default: wait for it).
    #[arg(long, conflicts_with = "wait_timeout")]
    pub no_wait: bool,
    /// Wait at most this many seconds for another docfuse writing the index, then fail
    /// (exit 2) naming it (default: no limit).
    #[arg(long, value_name = "SECONDS", value_parser = parse_wait_timeout)]
    pub wait_timeout: Option<f64>,
    /// Remove roots of the index that no longer exist, with their chunks.
    #[arg(long)]
    pub drop_missing_roots: bool,
    /// Remove this root of the index, with its chunks, whether or not its folder still
    /// exists (repeatable; the other roots are kept). `pack:CODE` names an ingested pack
    /// (its unpacked files are deleted too).
    #[arg(long, value_name = "ROOT")]
    pub drop_root: Vec<PathBuf>,
}

impl RunArgs {
    /// The build options of this run: `config` (with its explicit `overrides`), whether
    /// vectors are wanted, and the embedder (or why none could be loaded).
    pub fn build_options<'a>(
        &self,
        config: crate::config::IndexConfig,
        overrides: serde_json::Value,
        vectors: &'a super::build_run::Vectors,
    ) -> crate::write::BuildOptions<'a> {
        crate::write::BuildOptions {
            config,
            config_overrides: overrides,
            embeddings: vectors.wanted,
            embedder: vectors.embedder.as_deref(),
            embedder_unavailable: vectors.unavailable.as_deref(),
            max_chunks: self.max_chunks,
            max_seconds: self.max_seconds,
            queue_pending: false,
            force: self.force,
            no_wait: self.no_wait,
            wait_timeout: self.wait_timeout,
            drop_missing_roots: self.drop_missing_roots,
            drop_roots: self.drop_root.clone(),
            link_roots: None,
            hooks: Default::default(),
            bucket_chunks: None,
            store_generation: None,
        }
    }
}

#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Roots to refresh (default: every root of the index); the others are kept as they are.
    #[arg(value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Do not embed (a lexical-only refresh); default: embed when the index has vectors.
    #[arg(long)]
    pub no_embeddings: bool,
    #[command(flatten)]
    pub run: RunArgs,
    /// Keep refreshing as files change (debounced), until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// Quiet period, ms: a refresh runs once no file changed for this long (or 20 periods
    /// after the first change, if changes never stop). Reads are not changes.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub debounce_ms: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Most results to print, 1 to 100.
    #[arg(short = 'n', long, default_value_t = 10)]
    pub limit: usize,
    /// Only results whose path (relative to its root) starts with this, e.g. `guide/`.
    #[arg(long, value_name = "PREFIX")]
    pub path_prefix: Option<String>,
    /// Only results whose path matches this glob (repeatable; `*` stays within a
    /// folder, `**` crosses folders), e.g. `commands/*.md`.
    #[arg(long, value_name = "GLOB")]
    pub glob: Vec<String>,
    /// Leave out results whose path matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Only entries of this kind: `document`, `module` (source files, with `index
    /// --sources`), `area` (the module hits of each folder as one result), `package` (package manifests, `docfuse.toml` ownership records),
    /// `intent` or `change` (`docfuse.toml` routes). Repeatable, or comma-separated.
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    pub kind: Vec<String>,
    /// Raw chunks instead of one result per section.
    #[arg(long)]
    pub chunks: bool,
    /// Favour documentation written for agents (AGENTS.md, CLAUDE.md, front matter
    /// `audience: agent`): its lexical score is multiplied by the audience fit (1.5).
    #[arg(long)]
    pub agent: bool,
    /// Print one JSON object: {"query", "results": [...]}.
    #[arg(long)]
    pub json: bool,
    /// Attach matched terms, fields and every named score part to each result.
    #[arg(long)]
    pub explain: bool,
    /// Drop results under this share of the best score (0..=1; default 0: keep every
    /// result up to the limit).
    #[arg(long)]
    pub floor: Option<f32>,
    /// Refresh the index before searching.
    #[arg(long)]
    pub refresh: bool,
    /// Answer in this process even when a `docfuse serve` or `docfuse mcp` of the same
    /// index folder is running (by default such a server answers, with the model and the
    /// index it holds loaded), and start no resident `docfuse daemon` (also
    /// `DOCFUSE_NO_DAEMON=1`).
    #[arg(long)]
    pub no_daemon: bool,
    /// Set when this search may start a resident `docfuse daemon` for its index after
    /// loading the model (a folder index, no `--no-daemon` / `DOCFUSE_NO_DAEMON`).
    #[arg(skip)]
    pub start_daemon: bool,
    /// auto (hybrid when the index has usable vectors, else lexical), lexical, vector or hybrid.
    #[arg(long, default_value = "auto")]
    pub mode: crate::read::Mode,
    /// The question or keywords (several words are joined with spaces). Options may come
    /// before or after it; a word that starts with `-` and is not an option of this
    /// command is part of the query (`docfuse search --torch-backend`).
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when the index is stale (as `git diff --exit-code`), for scripts and CI;
    /// without it, status exits 0 whether fresh or stale (2 on errors).
    #[arg(long)]
    pub exit_code: bool,
    /// The database URL when `index` was one (set by the dispatcher).
    #[arg(skip)]
    pub database: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// A document (path relative to its root; `ROOT:PATH` with several roots): list its
    /// relations instead of the top pages.
    #[arg(value_name = "PATH")]
    pub path: Option<String>,
    /// How many pages to list, by PageRank.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// List every broken link of the index (a path that names no indexed document, an
    /// `#anchor` that names no section of its page) with the page and line it is on.
    #[arg(long, conflicts_with = "path")]
    pub broken: bool,
    /// With `--broken`: exit 1 when the index has a broken link (as `git diff
    /// --exit-code`), for scripts and CI.
    #[arg(long, requires = "broken")]
    pub exit_code: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// A result's id (`guide/install.md#install/from-source`: its whole section), or a
    /// path relative to its root, with an optional line or range (`guide/install.md:12`,
    /// `guide/install.md:12-40`).
    #[arg(value_name = "ID_OR_PATH")]
    pub target: String,
    /// First line to read (1-based): the next page of a long passage.
    #[arg(long, value_name = "LINE")]
    pub start_line: Option<u32>,
    /// Last line to read (1-based, inclusive).
    #[arg(long, value_name = "LINE")]
    pub end_line: Option<u32>,
    /// Root number, when several roots hold the same path (`status` lists them).
    #[arg(long, value_name = "N")]
    pub root: Option<usize>,
    /// Most bytes of text on one page (a page ends on a line end), 16 to 262144.
    #[arg(long, value_name = "BYTES", default_value_t = crate::retriever::MAX_PASSAGE_BYTES,
          value_parser = page_bytes)]
    pub max_bytes: usize,
    /// Print JSON (the passage of `GET /v1/passage`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HandoffArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// A document path, a folder, a section id (`path#slug`) or a document's title or
    /// alias; with `index --sources`, also a source file (module), a package manifest, an
    /// item id (`src/a.ts#parseConfig`) or a `docfuse.toml` ownership id.
    #[arg(value_name = "TARGET")]
    pub target: String,
    /// Also say what may make the answer incomplete: a stale index, chunks waiting for
    /// vectors, skipped files, no agent document.
    #[arg(long)]
    pub caveats: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Index folder, or a PostgreSQL index: postgres://USER@HOST:PORT/DB[?schema=NAME].
    #[arg(long, default_value = crate::generation::DEFAULT_INDEX_DIR)]
    pub index: PathBuf,
    /// Questions: docfuse JSONL ({"id","query","relevant":[{"path","heading","grade"}]})
    /// or BEIR queries.jsonl (with --qrels).
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// BEIR qrels TSV (query-id, corpus-id, score); only its queries are evaluated.
    #[arg(long, value_name = "FILE")]
    pub qrels: Option<PathBuf>,
    /// Retrieval modes to evaluate, comma-separated: lexical, vector, hybrid.
    #[arg(long, default_value = "lexical", value_delimiter = ',')]
    pub mode: Vec<crate::read::Mode>,
    /// Evaluate each value of one setting, e.g. `alpha=0.3,0.5,0.7` (lexical weight of
    /// the default, calibrated fusion), `noise=1,2` (its noise level in standard
    /// deviations), `cal=0.4:2,0.5:1` (both), `mm_alpha=0.4` (min-max convex fusion),
    /// `rrf_k=20,60` (reciprocal rank fusion), `prefix_weight=0,0.5` (query settings:
    /// prefix_min_chars, prefix_max_expansions, prefix_weight, about_gain, exact_id_gain,
    /// exact_path_gain, exact_symbol_gain, stop_weight, stop_about, stem_weight,
    /// plural_weight, canon_gain, prox_gain (graph proximity, 0 by default), path_prior,
    /// symbol_prior, module_prior, changelog_prior, template_prior; `exhaustive=true,false`: lexical results found by
    /// scoring every posting or with score bounds, the same results). The floor is always
    /// 0 in eval.
    #[arg(long, value_name = "NAME=V,V,...")]
    pub sweep: Option<String>,
    /// The fusion of hybrid mode: `cal:ALPHA:NOISE` (calibrated convex, the default
    /// method), `mm:ALPHA` (min-max convex) or `rrf:K` (reciprocal rank).
    #[arg(long, value_name = "SPEC")]
    pub fusion: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Include per-query results (rank of the first relevant result, metrics).
    #[arg(long)]
    pub per_query: bool,
    /// Results asked of each search (1–1000): the latency of a search of that many;
    /// metrics past it (recall@100 at depth 10) see only that many.
    #[arg(long, value_name = "N", default_value_t = crate::eval::EVAL_DEPTH as u64,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub depth: u64,
    /// Also write the ranked units as a TREC run file (`qid Q0 docid rank score tag`),
    /// for checking the metrics with trec_eval or pytrec_eval.
    #[arg(long, value_name = "FILE")]
    pub run: Option<PathBuf>,
    /// Fail (exit 2) if recall@5 is below this value.
    #[arg(long, value_name = "R")]
    pub min_recall5: Option<f64>,
    /// Fail (exit 2) if MRR@10 is below this value.
    #[arg(long, value_name = "M")]
    pub min_mrr10: Option<f64>,
}

/// `--watch` for the servers: refresh the index in-process as its roots change.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WatchArgs {
    /// Also run the refresh job in this process: refresh once at start, then after every
    /// debounced burst of changes under the index's roots (answers follow each published
    /// generation; a refresh's summary goes to stderr).
    #[arg(long)]
    pub watch: bool,
    /// With `--watch`, quiet period, ms: a refresh runs once no file changed for this long
    /// (or 20 periods after the first change, if changes never stop).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub debounce_ms: u64,
}

/// A `--max-bytes` page size: 16 bytes (a page shows at least the start of a line) to
/// [`crate::retriever::MAX_PASSAGE_BYTES`].
fn page_bytes(v: &str) -> Result<usize, String> {
    let max = crate::retriever::MAX_PASSAGE_BYTES;
    match v.parse::<usize>() {
        Ok(n) if (16..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of bytes from 16 to {max}")),
    }
}

/// Longest `--wait-timeout`, in seconds (a year; `Duration` holds no more than about
/// 5.8e11 years, and a longer wait is no wait at all).
const MAX_WAIT_S: f64 = 31_536_000.0;

/// `--poll`, `--fetch-timeout`: a finite number of seconds, 0.1 to 3600.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.1..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds from 0.1 to 3600")),
    }
}

/// `--wait-timeout`: a finite number of seconds, 0 to [`MAX_WAIT_S`].
fn parse_wait_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=MAX_WAIT_S).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not a number of seconds from 0 to {MAX_WAIT_S} (a year)"
        )),
    }
}
