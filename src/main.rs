//! The `docfuse` binary: parse arguments, run, map the outcome to an exit code
//! (0 results, 1 no results, 2 error).

// mimalloc (version 2) instead of the system allocator: a build or refresh allocates
// and frees millions of small strings (chunk ids, hashes, terms); on rust-docs it cut a
// 1-file refresh by about a fifth and a cold hybrid search by about a sixth, for about
// 10 MB more at peak (benches/RESULTS.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's purge delay option (`mi_option_purge_delay` of its `mimalloc.h`, v2: the
/// option after `mi_option_eager_commit_delay`, 14).
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t =
    libmimalloc_sys::mi_option_eager_commit_delay + 1;

/// Freed memory goes back to the OS after this many ms unused (mimalloc's default is
/// 10). A query of a large index frees tens of MB of accumulators; returned at once,
/// the next query faults them in again and the kernel zeroes every page (with
/// transparent huge pages, half the time of a warm lexical query at 4× rust-docs).
#[cfg(feature = "mimalloc")]
const PURGE_DELAY_MS: std::os::raw::c_long = 1000;

fn main() {
    // (a delay the user set in mimalloc's own variable stands)
    #[cfg(feature = "mimalloc")]
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options, an integer it reads at each purge.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
    // ONNX Runtime (1.31) otherwise starts its usage telemetry when the environment is
    // created: a device id and an event database under `~/.cache/Microsoft/` that it
    // tries to send to Microsoft. Set here, on the only thread, before any library loads;
    // the environment is also built with telemetry off (`embed::minilm`).
    if std::env::var_os("ORT_DISABLE_TELEMETRY").is_none() {
        std::env::set_var("ORT_DISABLE_TELEMETRY", "1");
    }
    std::process::exit(docfuse::cli::run());
}
