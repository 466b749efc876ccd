//! The `docfuse` binary: parse arguments, run, map the outcome to an exit code
//! (0 results, 1 no results, 2 error).

fn main() {
    std::process::exit(docfuse::cli::run());
}
