//! The `docfuse` binary: parse arguments, run, map the outcome to an exit code
//! (0 results, 1 no results, 2 error).

// mimalloc (version 2) instead of the system allocator: a build or refresh allocates
// and frees millions of small strings (chunk ids, hashes, terms); on rust-docs it cut a
// 1-file refresh by about a fifth and a cold hybrid search by about a sixth, for about
// 10 MB more at peak (benches/RESULTS.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // ONNX Runtime (1.31) otherwise starts its usage telemetry when the environment is
    // created: a device id and an event database under `~/.cache/Microsoft/` that it
    // tries to send to Microsoft. Set here, on the only thread, before any library loads;
    // the environment is also built with telemetry off (`embed::minilm`).
    if std::env::var_os("ORT_DISABLE_TELEMETRY").is_none() {
        std::env::set_var("ORT_DISABLE_TELEMETRY", "1");
    }
    std::process::exit(docfuse::cli::run());
}
