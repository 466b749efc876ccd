//! Test hooks of the write path.

/// When `DOCFUSE_TEST_PAUSE_AFTER` names `step`, prints `docfuse: paused after `step``
/// on stderr and sleeps for `DOCFUSE_TEST_PAUSE_MS` (default 60000) ms, so a crash test
/// can kill the process there. Steps: `lexical`, `embed-group`, `vectors`,
/// `before-publish`, `published`.
pub(super) fn pause_point(step: &str) {
    if std::env::var("DOCFUSE_TEST_PAUSE_AFTER").as_deref() == Ok(step) {
        eprintln!("docfuse: paused after `{step}`");
        let ms = std::env::var("DOCFUSE_TEST_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60_000);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
