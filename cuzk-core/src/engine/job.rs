//! One job's life: Queued → Running → Completed | Failed | Cancelled.
//!
//! Partition proofs arrive in any order and are put in place; the job
//! completes when the last one lands. The first failure or a cancel ends
//! it at once; work still in flight for it is dropped at the next
//! partition boundary (every stage checks [`Job::is_finished`]).

use super::outcome::{JobOutcome, JobTimings, ProofOutput};
use super::request::{JobId, PayloadDigest, Priority, ProofKind};
use super::status::{JobView, PartitionPhase, PartitionView};
use crate::failure::{CircuitError, ErrorKind};
use crate::partitioned::PartitionedCircuit;
use crossbeam::channel::Sender;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Engine-wide job counters.
#[derive(Debug, Default)]
pub struct JobCounters {
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    pub cancelled: AtomicU64,
    pub partitions_proved: AtomicU64,
    /// By [`ProofKind::index`].
    pub by_kind: [KindCounters; ProofKind::ALL.len()],
}

/// One proof kind's finished jobs.
#[derive(Debug, Default)]
pub struct KindCounters {
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    /// The completed jobs' times from submission to proof, summed.
    pub completed_ms: AtomicU64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Queued,
    Running,
    Finished,
}

struct State {
    phase: Phase,
    outcome: Option<JobOutcome>,
    proofs: Vec<Option<Vec<u8>>>,
    remaining: usize,
    timings: JobTimings,
    parts: Vec<PartState>,
    finished_at: Option<Instant>,
    /// When its wait for the SRS began, while it waits (a job cancelled or
    /// failed meanwhile reports that wait up to then).
    srs_since: Option<Instant>,
}

/// Where one partition is, for status.
#[derive(Clone, Copy, Default)]
struct PartState {
    phase: PartitionPhase,
    /// When its current stage began.
    since: Option<Instant>,
    synth: Option<Duration>,
    gpu: Option<Duration>,
}

/// What a job is, fixed at submission.
pub struct JobSpec {
    pub kind: ProofKind,
    pub priority: Priority,
    pub circuit_id: String,
    pub partitions: usize,
    pub request_id: Option<String>,
    pub payload_digest: Option<PayloadDigest>,
    pub circuit: Arc<dyn PartitionedCircuit>,
}

pub struct Job {
    pub id: JobId,
    /// Submission order; FIFO within a priority.
    pub seq: u64,
    pub kind: ProofKind,
    pub priority: Priority,
    pub circuit_id: String,
    pub partitions: usize,
    pub request_id: Option<String>,
    /// What its request asked for ([`super::ProofRequest::payload_digest`]).
    pub payload_digest: Option<PayloadDigest>,
    pub circuit: Arc<dyn PartitionedCircuit>,
    pub submitted: Instant,
    finished: AtomicBool,
    state: Mutex<State>,
    done: Condvar,
    counters: Arc<JobCounters>,
    on_finish: Sender<JobId>,
}

impl Job {
    pub fn new(id: JobId, seq: u64, spec: JobSpec, counters: Arc<JobCounters>, on_finish: Sender<JobId>) -> Self {
        let partitions = spec.partitions;
        Self {
            id,
            seq,
            kind: spec.kind,
            priority: spec.priority,
            circuit_id: spec.circuit_id,
            partitions,
            request_id: spec.request_id,
            payload_digest: spec.payload_digest,
            circuit: spec.circuit,
            submitted: Instant::now(),
            finished: AtomicBool::new(false),
            state: Mutex::new(State {
                phase: Phase::Queued,
                outcome: None,
                proofs: vec![None; partitions],
                remaining: partitions,
                timings: JobTimings::default(),
                parts: vec![PartState::default(); partitions],
                finished_at: None,
                srs_since: None,
            }),
            done: Condvar::new(),
            counters,
            on_finish,
        }
    }

    /// Whether a request with `digest` asks for something else than this
    /// job's (only where both are known).
    pub fn conflicts_with(&self, digest: Option<PayloadDigest>) -> bool {
        matches!((self.payload_digest, digest), (Some(a), Some(b)) if a != b)
    }

    /// Cheap check for the pipeline stages: skip work of finished jobs.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    pub fn phase(&self) -> Phase {
        self.state.lock().unwrap().phase
    }

    /// Dispatched: the queue wait ends here.
    pub fn mark_running(&self) {
        let mut st = self.state.lock().unwrap();
        if st.phase == Phase::Queued {
            st.phase = Phase::Running;
            st.timings.queue_wait_ms = ms(self.submitted.elapsed());
        }
    }

    /// Its batch waits for the SRS from `t` (until [`Self::add_srs_wait`]).
    pub fn srs_wait_starts(&self, t: Instant) {
        self.state.lock().unwrap().srs_since = Some(t);
    }

    pub fn add_srs_wait(&self, d: Duration) {
        let mut st = self.state.lock().unwrap();
        st.timings.srs_load_ms += ms(d);
        st.srs_since = None;
    }

    /// A stage starts on `partition` (status only).
    pub fn partition_enters(&self, partition: usize, phase: PartitionPhase) {
        if let Some(p) = self.state.lock().unwrap().parts.get_mut(partition) {
            p.phase = phase;
            p.since = Some(Instant::now());
        }
    }

    /// Time one partition spent in synthesis, whether it succeeded or not
    /// (so a failed job still says where its time went).
    pub fn add_synthesis(&self, partition: usize, d: Duration) {
        let mut st = self.state.lock().unwrap();
        st.timings.synthesis_ms += ms(d);
        if let Some(p) = st.parts.get_mut(partition) {
            (p.phase, p.synth, p.since) = (PartitionPhase::SynthDone, Some(d), None);
        }
    }

    /// Time one partition spent on the prover, whether it succeeded or not.
    pub fn add_gpu(&self, partition: usize, d: Duration) {
        let mut st = self.state.lock().unwrap();
        st.timings.gpu_compute_ms += ms(d);
        if let Some(p) = st.parts.get_mut(partition) {
            (p.gpu, p.since) = (Some(d), None);
        }
    }

    /// Fails the job for what went wrong with one of its partitions.
    pub fn fail_partition(&self, partition: usize, kind: ErrorKind, message: impl Into<String>) {
        let mut st = self.state.lock().unwrap();
        if st.phase == Phase::Finished {
            return;
        }
        if let Some(p) = st.parts.get_mut(partition) {
            (p.phase, p.since) = (PartitionPhase::Failed, None);
        }
        self.fail_locked(&mut st, kind, message.into());
    }

    /// The job as status shows it; a running stage counts its time so far.
    pub fn view(&self, now: Instant) -> JobView {
        let st = self.state.lock().unwrap();
        let running = |p: &PartState, stage: PartitionPhase| p.since.filter(|_| p.phase == stage).map(|t| now - t);
        JobView {
            id: self.id,
            request_id: self.request_id.clone(),
            kind: self.kind,
            phase: st.phase,
            age_ms: ms(now.saturating_duration_since(self.submitted)),
            finished_ms_ago: st.finished_at.map(|t| ms(now.saturating_duration_since(t))),
            partitions: st
                .parts
                .iter()
                .map(|p| PartitionView {
                    phase: p.phase,
                    synth_ms: p.synth.or_else(|| running(p, PartitionPhase::Synthesizing)).map(ms),
                    gpu_ms: p.gpu.or_else(|| running(p, PartitionPhase::Proving)).map(ms),
                })
                .collect(),
        }
    }

    /// When the job ended, if it has.
    pub fn finished_at(&self) -> Option<Instant> {
        self.state.lock().unwrap().finished_at
    }

    /// Records one partition's proof; completes the job with the last one,
    /// after the circuit's [`PartitionedCircuit::finish`] (assembly and,
    /// for Filecoin, the self-check) accepts the proofs. Its synthesis and
    /// prover times are recorded apart ([`Self::add_synthesis`],
    /// [`Self::add_gpu`]).
    pub fn record_partition(&self, partition: usize, proof: Vec<u8>) {
        let mut st = self.state.lock().unwrap();
        if st.phase == Phase::Finished || st.remaining == 0 || st.proofs[partition].is_some() {
            return;
        }
        st.proofs[partition] = Some(proof);
        st.remaining -= 1;
        st.parts[partition].phase = PartitionPhase::Done;
        self.counters.partitions_proved.fetch_add(1, Ordering::Relaxed);
        if st.remaining > 0 {
            return;
        }
        let parts: Vec<Vec<u8>> = st.proofs.iter_mut().map(|p| p.take().unwrap()).collect();
        // The self-check verifies every partition (ms each): not under the
        // job's lock, so status and cancel stay responsive meanwhile.
        drop(st);
        let t = Instant::now();
        let finished = catch_unwind(AssertUnwindSafe(|| self.circuit.finish(parts))).unwrap_or_else(|p| {
            Err(CircuitError::internal(format!("assembling the proof panicked: {}", super::shared::panic_message(&*p))))
        });
        let finish_ms = ms(t.elapsed());
        let mut st = self.state.lock().unwrap();
        if st.phase == Phase::Finished {
            return; // cancelled while the proof was being checked
        }
        let proof = match finished {
            Ok(proof) => proof,
            Err(e) => {
                return self.fail_locked(&mut st, e.kind, format!("proof rejected before reply: {}", e.message));
            }
        };
        st.timings.total_ms = ms(self.submitted.elapsed());
        let out = ProofOutput { proof, partitions: self.partitions, timings: st.timings };
        log::info!(
            "job completed job={} kind={} partitions={} queue_wait_ms={} srs_load_ms={} synthesis_ms={} gpu_ms={} finish_ms={finish_ms} total_ms={}",
            self.id, self.kind, self.partitions, out.timings.queue_wait_ms, out.timings.srs_load_ms,
            out.timings.synthesis_ms, out.timings.gpu_compute_ms, out.timings.total_ms
        );
        self.finish(&mut st, JobOutcome::Completed(out));
    }

    /// Fails the job unless it already ended.
    pub fn fail(&self, kind: ErrorKind, message: impl Into<String>) {
        let mut st = self.state.lock().unwrap();
        if st.phase == Phase::Finished {
            return;
        }
        self.fail_locked(&mut st, kind, message.into());
    }

    /// The timings of a job that ends now, not completed: the time spent
    /// until now, stages still running counted up to now (a job that never
    /// left the queue waited all of it there).
    fn timings_until_now(&self, st: &State) -> JobTimings {
        let now = Instant::now();
        let mut t = st.timings;
        t.total_ms = ms(now.saturating_duration_since(self.submitted));
        if st.phase == Phase::Queued {
            t.queue_wait_ms = t.total_ms;
        }
        if let Some(since) = st.srs_since {
            t.srs_load_ms += ms(now.saturating_duration_since(since));
        }
        for p in &st.parts {
            let Some(since) = p.since else { continue };
            let d = ms(now.saturating_duration_since(since));
            match p.phase {
                PartitionPhase::Synthesizing => t.synthesis_ms += d,
                PartitionPhase::Proving => t.gpu_compute_ms += d,
                _ => {}
            }
        }
        t
    }

    /// Fails a live job with the timings spent until now.
    fn fail_locked(&self, st: &mut State, error_kind: ErrorKind, message: String) {
        let t = self.timings_until_now(st);
        st.timings = t;
        log::warn!(
            "job failed job={} kind={} queue_wait_ms={} srs_load_ms={} synthesis_ms={} gpu_ms={} total_ms={} error_kind={error_kind} error={message:?}",
            self.id,
            self.kind,
            t.queue_wait_ms,
            t.srs_load_ms,
            t.synthesis_ms,
            t.gpu_compute_ms,
            t.total_ms
        );
        self.finish(st, JobOutcome::Failed { kind: error_kind, message, timings: t });
    }

    /// Cancels the job unless it already ended. Returns the phase it was in
    /// when it was still live.
    pub fn cancel(&self) -> Option<Phase> {
        let mut st = self.state.lock().unwrap();
        let was = st.phase;
        if was == Phase::Finished {
            return None;
        }
        let t = self.timings_until_now(&st);
        st.timings = t;
        log::info!(
            "job cancelled job={} kind={} was_running={} queue_wait_ms={} srs_load_ms={} synthesis_ms={} gpu_ms={} total_ms={}",
            self.id,
            self.kind,
            was == Phase::Running,
            t.queue_wait_ms,
            t.srs_load_ms,
            t.synthesis_ms,
            t.gpu_compute_ms,
            t.total_ms
        );
        self.finish(&mut st, JobOutcome::Cancelled { timings: t });
        Some(was)
    }

    /// Ends a job the engine refused as it was submitted (shutdown closed
    /// the queue after the submit looked): Cancelled to anyone waiting on
    /// it, and neither logged nor counted as a cancelled job, since its
    /// caller was told it was not taken.
    pub(super) fn refuse(&self) {
        let mut st = self.state.lock().unwrap();
        if st.phase != Phase::Finished {
            let timings = self.timings_until_now(&st);
            self.end(&mut st, JobOutcome::Cancelled { timings });
        }
    }

    fn finish(&self, st: &mut State, outcome: JobOutcome) {
        self.count(&outcome);
        self.end(st, outcome);
    }

    fn count(&self, outcome: &JobOutcome) {
        let (c, k) = (&self.counters, &self.counters.by_kind[self.kind.index()]);
        match outcome {
            JobOutcome::Completed(out) => {
                c.completed.fetch_add(1, Ordering::Relaxed);
                k.completed.fetch_add(1, Ordering::Relaxed);
                k.completed_ms.fetch_add(out.timings.total_ms, Ordering::Relaxed);
            }
            JobOutcome::Failed { .. } => {
                c.failed.fetch_add(1, Ordering::Relaxed);
                k.failed.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                c.cancelled.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn end(&self, st: &mut State, outcome: JobOutcome) {
        st.phase = Phase::Finished;
        st.finished_at = Some(Instant::now());
        st.outcome = Some(outcome);
        st.proofs.clear();
        self.finished.store(true, Ordering::Release);
        self.done.notify_all();
        let _ = self.on_finish.send(self.id);
    }

    /// Waits up to `timeout` (None = forever) for the job to end.
    pub fn wait(&self, timeout: Option<Duration>) -> JobOutcome {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.state.lock().unwrap();
        loop {
            if let Some(o) = &st.outcome {
                return o.clone();
            }
            st = match deadline {
                None => self.done.wait(st).unwrap(),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return JobOutcome::Timeout;
                    }
                    self.done.wait_timeout(st, d - now).unwrap().0
                }
            };
        }
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}
