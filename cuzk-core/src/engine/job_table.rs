//! All jobs by id, the idempotency index (request id → live job), and the
//! retention of finished jobs so a late await still gets the result.

use super::job::Job;
use super::request::JobId;
use crossbeam::channel::{unbounded, Receiver, Sender};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Finished jobs kept for late awaits; older ones are forgotten.
pub const RETAIN_FINISHED: usize = 10_000;

#[derive(Default)]
struct Inner {
    jobs: HashMap<JobId, Arc<Job>>,
    by_request: HashMap<String, JobId>,
    finished: VecDeque<JobId>,
    next_id: u64,
}

pub struct JobTable {
    inner: Mutex<Inner>,
    finished_tx: Sender<JobId>,
    finished_rx: Receiver<JobId>,
}

impl Default for JobTable {
    fn default() -> Self {
        let (finished_tx, finished_rx) = unbounded();
        Self { inner: Mutex::default(), finished_tx, finished_rx }
    }
}

impl JobTable {
    /// Where jobs report that they ended.
    pub fn finish_sender(&self) -> Sender<JobId> {
        self.finished_tx.clone()
    }

    /// The live job submitted with `request_id`, or a new one made by
    /// `make(id, seq)` and registered.
    pub fn insert_or_existing(&self, request_id: Option<&str>, make: impl FnOnce(JobId, u64) -> Arc<Job>) -> (Arc<Job>, bool) {
        let mut inner = self.inner.lock().unwrap();
        self.prune(&mut inner);
        if let Some(rid) = request_id {
            if let Some(job) = inner.by_request.get(rid).and_then(|id| inner.jobs.get(id)) {
                if !job.is_finished() {
                    return (job.clone(), false);
                }
            }
        }
        inner.next_id += 1;
        let id = JobId(inner.next_id);
        let job = make(id, inner.next_id);
        inner.jobs.insert(id, job.clone());
        if let Some(rid) = request_id {
            inner.by_request.insert(rid.to_string(), id);
        }
        (job, true)
    }

    /// The job last submitted with `request_id`, live or finished and
    /// still kept.
    pub fn by_request(&self, request_id: &str) -> Option<JobId> {
        self.inner.lock().unwrap().by_request.get(request_id).copied()
    }

    /// The live job submitted with `request_id`, if any.
    pub fn live_by_request(&self, request_id: &str) -> Option<JobId> {
        let inner = self.inner.lock().unwrap();
        let id = inner.by_request.get(request_id)?;
        inner.jobs.get(id).filter(|j| !j.is_finished()).map(|j| j.id)
    }

    pub fn get(&self, id: JobId) -> Option<Arc<Job>> {
        self.inner.lock().unwrap().jobs.get(&id).cloned()
    }

    /// Jobs not yet finished.
    pub fn live(&self) -> Vec<Arc<Job>> {
        self.inner.lock().unwrap().jobs.values().filter(|j| !j.is_finished()).cloned().collect()
    }

    /// Live jobs and those finished within `within`, by submission order.
    pub fn recent(&self, within: Duration) -> Vec<Arc<Job>> {
        let mut inner = self.inner.lock().unwrap();
        self.prune(&mut inner);
        let mut jobs: Vec<Arc<Job>> = inner.jobs.values().filter(|j| !j.is_finished()).cloned().collect();
        // `finished` is in the order jobs ended: walk back from the newest.
        for id in inner.finished.iter().rev() {
            let Some(job) = inner.jobs.get(id) else { continue };
            if job.finished_at().is_some_and(|t| t.elapsed() > within) {
                break;
            }
            jobs.push(job.clone());
        }
        jobs.sort_by_key(|j| j.seq);
        jobs
    }

    fn prune(&self, inner: &mut Inner) {
        inner.finished.extend(self.finished_rx.try_iter());
        while inner.finished.len() > RETAIN_FINISHED {
            let id = inner.finished.pop_front().unwrap();
            if let Some(job) = inner.jobs.remove(&id) {
                if let Some(rid) = &job.request_id {
                    if inner.by_request.get(rid) == Some(&id) {
                        inner.by_request.remove(rid);
                    }
                }
            }
        }
    }
}
