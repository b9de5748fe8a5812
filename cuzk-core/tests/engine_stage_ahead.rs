//! The interlock's staging ahead ([`ProverBackend::stage_ahead`]): where a
//! call's working set does not fit beside the call computing on its
//! device, its part is staged under `mem_mtx` while that call computes,
//! and its fallback then computes with it; a call on the fallback leaves
//! the next one room for its part where its own grant stays at full speed.

mod common;

use common::*;
use cuzk_core::engine::{CpuBackend, DeviceInfo, Engine, ProofRequest, ProveInput, ProverBackend, ProverError, StageAhead};
use cuzk_core::groth16::Proof;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// A call's working set, the part of it staged ahead, and the least grant
/// a call computes in at full speed.
const NEED: u64 = 10 * MIB;
const PART: u64 = 3 * MIB;
const MIN_GRANT: u64 = 9 * MIB;
/// Partitions of the job: one call each.
const CALLS: usize = 5;

/// How long a compute waits for the next call to stage ahead beside it
/// before it gives up (the test then finds that call not staged beside).
const BESIDE: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Calls {
    /// Calls in a compute now.
    computing: usize,
    /// Computes and epilogues entered so far.
    computes: usize,
    epilogues: usize,
    /// Calls that found no room for their whole working set and asked what
    /// to stage ahead (then took the fallback).
    asked: usize,
    /// Parts staged ahead so far, and of them while another call computed.
    staged: usize,
    staged_beside: usize,
    /// Each compute: whether its part was staged ahead, and its grant
    /// (None: the pre-staged path, whole).
    grants: Vec<(bool, Option<u64>)>,
}

/// One device of `vram` bytes; proves on the CPU. Each compute but the
/// last waits until the next call found no room for its working set (and,
/// with `overlap`, from the second on, until it staged its part ahead),
/// and the worker that finished a compute goes on (epilogue, next call)
/// only once the next compute has begun: the order the interlock allows
/// shows deterministically, whatever the threads' timing.
struct StagingBackend {
    vram: u64,
    overlap: bool,
    calls: Mutex<Calls>,
    changed: Condvar,
}

impl StagingBackend {
    fn prove(&self, input: &ProveInput<'_>, staged: bool, grant: Option<u64>) -> Result<Vec<Proof>, ProverError> {
        let mut c = self.calls.lock().unwrap();
        let n = c.computes;
        c.computes += 1;
        c.computing += 1;
        c.grants.push((staged, grant));
        self.changed.notify_all();
        let deadline = Instant::now() + BESIDE;
        // Compute 0 runs beside nothing staged (the card held one working
        // set); compute n >= 1 beside the n-th part staged ahead.
        let staged = if self.overlap { n } else { 0 };
        while n + 1 < CALLS && (c.asked < n + 1 || c.staged < staged) && Instant::now() < deadline {
            c = self.changed.wait_timeout(c, deadline.saturating_duration_since(Instant::now())).unwrap().0;
        }
        drop(c);
        let proofs = CpuBackend.compute(0, (), input);
        self.calls.lock().unwrap().computing -= 1;
        proofs
    }
}

impl ProverBackend for StagingBackend {
    type Staged = bool;
    type Computed = Vec<Proof>;
    fn name(&self) -> &str {
        "staging"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        vec![DeviceInfo { ordinal: 0, name: "staging".into(), vram_bytes: self.vram }]
    }
    fn vram_needed(&self, _device: u32, _input: &ProveInput<'_>) -> u64 {
        NEED
    }
    fn prestage(&self, _device: u32, _input: &ProveInput<'_>) -> Result<bool, ProverError> {
        Ok(false)
    }
    fn compute(&self, _device: u32, _staged: bool, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.prove(input, false, None)
    }
    fn compute_fallback(&self, _device: u32, granted: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.prove(input, false, Some(granted))
    }
    fn stage_ahead(&self, _device: u32, _input: &ProveInput<'_>) -> Option<StageAhead> {
        self.calls.lock().unwrap().asked += 1;
        self.changed.notify_all();
        Some(StageAhead { bytes: PART, min_grant: MIN_GRANT })
    }
    fn prestage_ahead(&self, _device: u32, _input: &ProveInput<'_>) -> Result<bool, ProverError> {
        let mut c = self.calls.lock().unwrap();
        c.staged += 1;
        if c.computing > 0 {
            c.staged_beside += 1;
        }
        self.changed.notify_all();
        Ok(true)
    }
    fn compute_fallback_staged(&self, _device: u32, granted: u64, staged: bool, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        assert!(staged, "compute_fallback_staged without a part staged ahead");
        self.prove(input, true, Some(granted))
    }
    fn epilogue(&self, device: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        let mut c = self.calls.lock().unwrap();
        let k = c.epilogues;
        c.epilogues += 1;
        let deadline = Instant::now() + BESIDE;
        while c.computes < (k + 2).min(CALLS) && Instant::now() < deadline {
            c = self.changed.wait_timeout(c, deadline.saturating_duration_since(Instant::now())).unwrap().0;
        }
        drop(c);
        CpuBackend.epilogue(device, computed)
    }
}

/// The job's partitions through the engine on a device of `vram` bytes
/// with two GPU workers; every proof verifies. The backend's record.
fn run(vram: u64, overlap: bool) -> Calls {
    let backend = Arc::new(StagingBackend { vram, overlap, calls: Mutex::default(), changed: Condvar::new() });
    let mut cfg = config(1, 2);
    // The sizes above are the whole device's for normal work: no urgent
    // VRAM reserve beside it.
    cfg.gpus.urgent_vram_reserve = cuzk_core::config::ByteSize(0);
    let engine = Engine::start_with_backend(cfg, backend.clone()).unwrap();
    let job = builtin("synthetic:256:4", CALLS, 11);
    let (_, out) = engine.prove(ProofRequest::builtin(job), WAIT).unwrap();
    verify(&engine, &job, &expect_completed(out));
    let st = engine.status();
    assert!(st.devices[0].vram.peak_bytes <= vram, "VRAM peak {} over {vram}", st.devices[0].vram.peak_bytes);
    assert_eq!(st.devices[0].vram.used_bytes, 0);
    drop(engine);
    let calls = std::mem::take(&mut *backend.calls.lock().unwrap());
    calls
}

#[test]
fn the_next_call_stages_its_part_ahead_beside_a_compute() {
    // Room for one working set and a part: call 0 pre-staged whole; call 1
    // on the fallback (nothing was free beside call 0), granted 9 MiB so
    // that call 2's part fits beside it; calls 2.. staged ahead beside the
    // call computing, each granted its part and 6 MiB. (A call whose part
    // is reserved just after the compute before it ended stages it beside
    // nothing: the grants are the same.)
    let c = run(12 * MIB, true);
    assert_eq!(c.grants.len(), CALLS);
    assert_eq!(c.grants[0], (false, None), "{:?}", c.grants);
    for &(staged, grant) in &c.grants[1..] {
        assert!(grant.is_none() && !staged || grant == Some(MIN_GRANT), "{:?}", c.grants);
    }
    assert_eq!(c.staged, c.grants.iter().filter(|g| g.0).count());
    assert!(c.staged_beside >= 1, "no part staged beside a compute: {:?}", c.grants);
    println!("grants {:?}; {} parts staged ahead, {} beside a compute", c.grants, c.staged, c.staged_beside);
}

#[test]
fn no_room_is_left_where_the_grant_would_fall_below_full_speed() {
    // 11 MiB: leaving 3 MiB for the next part would grant 8 MiB, under
    // the 9 MiB of full speed: each fallback takes what it needs, and no
    // part finds room beside a compute.
    let c = run(11 * MIB, false);
    for &(_, grant) in &c.grants {
        assert!(grant.is_none() || grant == Some(NEED), "{:?}", c.grants);
    }
    assert_eq!(c.staged_beside, 0);
}
