//! Test hooks of the write path.

/// When `DOCFUSE_TEST_PAUSE_AFTER` names `step`, prints `docfuse: paused after `step``
/// on stderr and sleeps for `DOCFUSE_TEST_PAUSE_MS` (default 60000) ms, so a crash test
/// can kill the process there. Steps: `bucket` (a lexical bucket committed), `lexical`,
/// `embed-group`, `vectors`, `before-publish`, `published`; `db-before-commit` (a
/// PostgreSQL publish written, not committed), `worker-embedded` (an embedding worker's
/// batch embedded, its vectors not written).
pub(crate) fn pause_point(step: &str) {
    if std::env::var("DOCFUSE_TEST_PAUSE_AFTER").as_deref() == Ok(step) {
        eprintln!("docfuse: paused after `{step}`");
        let ms = std::env::var("DOCFUSE_TEST_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60_000);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// `DOCFUSE_TEST_BUCKET_CHUNKS`: the lexical bucket size a test asks of the binary (when
/// the build options name none), so that end-to-end tests get many buckets from small
/// corpora. Rankings never depend on it.
pub(super) fn bucket_chunks() -> Option<u64> {
    std::env::var("DOCFUSE_TEST_BUCKET_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
}
