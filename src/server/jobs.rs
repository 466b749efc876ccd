//! Refresh jobs of `POST /v1/refresh`: run one at a time on a thread of their own, in
//! the order asked; a request made while a job waits to start joins that job (it will
//! see the same files). The last [`KEPT_JOBS`] jobs can be asked about by id.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// Finished jobs kept for `GET /v1/refresh/{job}`.
pub const KEPT_JOBS: usize = 64;

/// What a job runs: a refresh of the index, its report as JSON or why it failed.
pub type RefreshFn = dyn Fn() -> Result<serde_json::Value, String> + Send + Sync;

/// The state of one job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobView {
    pub job: u64,
    /// `queued`, `running`, `done` or `failed`.
    pub status: &'static str,
    /// The build report (`docfuse refresh --json`'s fields) once `done`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<serde_json::Value>,
    /// Why it failed, once `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Default)]
struct State {
    next: u64,
    jobs: BTreeMap<u64, JobView>,
    /// The job waiting to start, if any.
    queued: Option<u64>,
}

/// The refresh jobs of one server (cheap to clone).
#[derive(Clone)]
pub struct RefreshJobs {
    shared: Arc<(Mutex<State>, Condvar)>,
}

impl std::fmt::Debug for RefreshJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshJobs")
    }
}

impl RefreshJobs {
    /// Starts the thread that runs `run` for each job.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn start(run: Box<RefreshFn>) -> std::io::Result<RefreshJobs> {
        let jobs = RefreshJobs {
            shared: Arc::new((Mutex::new(State::default()), Condvar::new())),
        };
        let worker = jobs.clone();
        std::thread::Builder::new()
            .name("docfuse-refresh-jobs".into())
            .spawn(move || worker.work(&*run))?;
        Ok(jobs)
    }

    /// Asks for a refresh: the job waiting to start if there is one, else a new one.
    pub fn submit(&self) -> JobView {
        let (lock, wake) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = s.queued {
            if let Some(v) = s.jobs.get(&id) {
                return v.clone();
            }
        }
        s.next += 1;
        let id = s.next;
        let view = JobView {
            job: id,
            status: "queued",
            report: None,
            error: None,
        };
        s.jobs.insert(id, view.clone());
        s.queued = Some(id);
        while s.jobs.len() > KEPT_JOBS {
            s.jobs.pop_first();
        }
        wake.notify_all();
        view
    }

    /// The state of job `id`, while it is kept.
    pub fn get(&self, id: u64) -> Option<JobView> {
        let (lock, _) = &*self.shared;
        let s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        s.jobs.get(&id).cloned()
    }

    fn work(&self, run: &RefreshFn) {
        let (lock, wake) = &*self.shared;
        loop {
            let id = {
                let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
                while s.queued.is_none() {
                    s = wake.wait(s).unwrap_or_else(PoisonError::into_inner);
                }
                let id = s.queued.take().unwrap_or_default();
                if let Some(v) = s.jobs.get_mut(&id) {
                    v.status = "running";
                }
                id
            };
            // a panicking job fails; the next ones still run
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                .unwrap_or_else(|_| {
                    Err("the refresh failed unexpectedly (a bug: see the server's log)".into())
                });
            let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(v) = s.jobs.get_mut(&id) {
                match outcome {
                    Ok(report) => {
                        v.status = "done";
                        v.report = Some(report);
                    }
                    Err(e) => {
                        v.status = "failed";
                        v.error = Some(e);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Waits until job `id` is finished.
    fn finished(jobs: &RefreshJobs, id: u64) -> JobView {
        for _ in 0..500 {
            let v = jobs.get(id).unwrap();
            if matches!(v.status, "done" | "failed") {
                return v;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("job {id} did not finish");
    }

    #[test]
    fn jobs_run_in_order_and_a_request_joins_the_job_waiting_to_start() {
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let gate = Mutex::new(gate_rx);
        let runs = Arc::new(Mutex::new(0u32));
        let counted = runs.clone();
        let jobs = RefreshJobs::start(Box::new(move || {
            gate.lock().unwrap().recv().unwrap();
            let n = {
                let mut n = counted.lock().unwrap();
                *n += 1;
                *n
            };
            if n == 2 {
                return Err("disk full".into());
            }
            if n == 3 {
                panic!("a bug");
            }
            Ok(serde_json::json!({"run": n}))
        }))
        .unwrap();
        let first = jobs.submit();
        // wait until the first one runs, so the next two wait together
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while jobs.get(first.job).unwrap().status != "running" {
            assert!(std::time::Instant::now() < deadline, "job 1 never ran");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let second = jobs.submit();
        let third = jobs.submit();
        assert_eq!((first.job, second.job, third.job), (1, 2, 2));
        assert_eq!(second.status, "queued");
        gate_tx.send(()).unwrap();
        gate_tx.send(()).unwrap();
        let one = finished(&jobs, 1);
        assert_eq!(
            (one.status, one.report),
            ("done", Some(serde_json::json!({"run": 1})))
        );
        let two = finished(&jobs, 2);
        assert_eq!(
            (two.status, two.error.as_deref()),
            ("failed", Some("disk full"))
        );
        assert_eq!(*runs.lock().unwrap(), 2);
        assert_eq!(jobs.get(3), None);
        // a job that panics fails, and the next one still runs
        let third = jobs.submit();
        gate_tx.send(()).unwrap();
        assert_eq!(finished(&jobs, third.job).status, "failed");
        let fourth = jobs.submit();
        gate_tx.send(()).unwrap();
        assert_eq!(finished(&jobs, fourth.job).status, "done");
    }
}
