//! The job queue: highest priority first, FIFO (submission order) within a
//! priority, and the batch collector that takes jobs off it.
//!
//! Only the dispatcher takes batches; cancel removes queued jobs directly.

use super::batch::{BatchDecision, BatchRules, NextJob};
use super::job::Job;
use super::request::{Priority, ProofKind};
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

type Key = (Reverse<Priority>, u64);

/// What the dispatcher asking for a batch knows.
pub struct Take<'a> {
    /// The least priority it takes.
    pub min: Priority,
    /// Whether one of its batches is loading a circuit's SRS.
    pub loading: &'a dyn Fn(&str) -> bool,
    /// Whether a circuit's SRS is resident.
    pub resident: &'a dyn Fn(&str) -> bool,
    /// Whether one of its batches has loaded its SRS and waits for a
    /// permit; `serve` gives it one.
    pub loaded: &'a dyn Fn() -> bool,
    pub serve: &'a dyn Fn(),
}

#[derive(Default)]
struct State {
    queue: BTreeMap<Key, Arc<Job>>,
    closed: bool,
    paused: bool,
}

pub struct Scheduler {
    state: Mutex<State>,
    wake: Condvar,
    rules: BatchRules,
    sort_by_type: bool,
}

fn key(job: &Job) -> Key {
    (Reverse(job.priority), job.seq)
}

fn same_circuit(a: &Job, b: &Job) -> bool {
    a.kind == b.kind && a.circuit_id == b.circuit_id
}

impl Scheduler {
    pub fn new(rules: BatchRules, sort_by_type: bool) -> Self {
        Self { state: Mutex::default(), wake: Condvar::new(), rules, sort_by_type }
    }

    /// Queues a job; false once the queue is closed.
    pub fn push(&self, job: Arc<Job>) -> bool {
        let mut st = self.state.lock().unwrap();
        if st.closed {
            return false;
        }
        st.queue.insert(key(&job), job);
        self.wake.notify_all();
        true
    }

    /// Takes a queued job out (for cancel); false if it was not queued.
    pub fn remove(&self, job: &Job) -> bool {
        self.state.lock().unwrap().queue.remove(&key(job)).is_some()
    }

    /// No more pushes; the collector flushes what it has and drains.
    pub fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.wake.notify_all();
    }

    /// Holds dispatching (queued jobs wait) until [`Self::resume`].
    pub fn pause(&self) {
        self.state.lock().unwrap().paused = true;
    }

    pub fn resume(&self) {
        self.state.lock().unwrap().paused = false;
        self.wake.notify_all();
    }

    /// 1-based place of a queued job in dispatch order.
    pub fn position(&self, job: &Job) -> Option<usize> {
        let st = self.state.lock().unwrap();
        st.queue.contains_key(&key(job)).then(|| st.queue.range(..key(job)).count() + 1)
    }

    pub fn pending(&self) -> Vec<(ProofKind, Priority)> {
        self.state.lock().unwrap().queue.values().map(|j| (j.kind, j.priority)).collect()
    }

    /// Wakes [`Self::next_batch`] to check its `take.loaded` again.
    pub fn wake(&self) {
        let _st = self.state.lock().unwrap();
        self.wake.notify_all();
    }

    /// Blocks for the next batch: jobs of one circuit in queue order,
    /// collected per [`BatchRules`], led by the first job of priority
    /// `take.min` or above whose circuit is not loading; past a job of a
    /// loading circuit, only jobs of a resident one (a job that would load
    /// an SRS keeps its place in line). None when closed and no such job
    /// is queued. Whenever `take.loaded()` holds (checked under the
    /// queue's lock, again at each [`Self::wake`]), even while paused or
    /// collecting, it calls `take.serve()` without the lock.
    pub fn next_batch(&self, take: &Take) -> Option<Vec<Arc<Job>>> {
        let mut st = self.state.lock().unwrap();
        loop {
            st = self.serve_loaded(st, take);
            if st.paused && !st.closed {
                st = self.wake.wait(st).unwrap();
                continue;
            }
            if let Some(k) = Self::lead(&st, take) {
                let job = st.queue.remove(&k).unwrap();
                drop(st);
                return Some(self.fill(job, take));
            }
            if st.closed && !st.queue.values().any(|j| j.priority >= take.min) {
                return None;
            }
            st = self.wake.wait(st).unwrap();
        }
    }

    /// The key of the job [`Self::next_batch`] takes first, if any.
    fn lead(st: &State, take: &Take) -> Option<Key> {
        let mut passed_loading = false;
        // The queue is in priority order.
        for (k, j) in st.queue.iter().take_while(|(_, j)| j.priority >= take.min) {
            if (take.loading)(&j.circuit_id) {
                passed_loading = true;
            } else if !passed_loading || (take.resident)(&j.circuit_id) {
                return Some(*k);
            }
        }
        None
    }

    /// Calls `take.serve()` (unlocked) while `take.loaded()` holds.
    fn serve_loaded<'a>(&'a self, mut st: MutexGuard<'a, State>, take: &Take) -> MutexGuard<'a, State> {
        while (take.loaded)() {
            drop(st);
            (take.serve)();
            st = self.state.lock().unwrap();
        }
        st
    }

    fn fill(&self, head: Arc<Job>, take: &Take) -> Vec<Arc<Job>> {
        let started = Instant::now();
        let mut batch = vec![head];
        let mut st = self.state.lock().unwrap();
        loop {
            st = self.serve_loaded(st, take);
            let (next, take_key) = self.next_for(&st, &batch[0]);
            match self.rules.decide(batch.len(), next, started.elapsed(), st.closed) {
                BatchDecision::Take => batch.push(st.queue.remove(&take_key.unwrap()).unwrap()),
                BatchDecision::Flush => return batch,
                BatchDecision::Wait(d) => st = self.wake.wait_timeout(st, d).unwrap().0,
            }
        }
    }

    /// The job in line for a batch led by `lead`: the queue head, or with
    /// sort_by_type the first same-circuit job of the head's priority.
    fn next_for(&self, st: &State, lead: &Job) -> (NextJob, Option<Key>) {
        let Some((k, head)) = st.queue.first_key_value() else {
            return (NextJob::None, None);
        };
        if same_circuit(head, lead) {
            return (NextJob::SameCircuit, Some(*k));
        }
        if self.sort_by_type && head.priority == lead.priority {
            if let Some((k, _)) = st.queue.iter().take_while(|(_, j)| j.priority == lead.priority).find(|(_, j)| same_circuit(j, lead)) {
                return (NextJob::SameCircuit, Some(*k));
            }
        }
        (NextJob::OtherCircuit, None)
    }
}
