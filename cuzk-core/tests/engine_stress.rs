//! Seeded random interleavings of submits, cancels and awaits under a
//! tight memory budget, with batching and a VRAM limit that forces the
//! fallback path. Replay a failure with CUZK_TEST_SEED=<seed>.

mod common;

use common::rss;
use common::*;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::config::TotalBudget;
use cuzk_core::engine::{BuiltinJob, PartitionedCircuit};
use cuzk_core::engine::{Engine, JobOutcome, Priority, ProofRequest, ShutdownMode};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn seed() -> u64 {
    let seed = std::env::var("CUZK_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random::<u64>);
    eprintln!("engine_stress: CUZK_TEST_SEED={seed}");
    seed
}

#[test]
fn random_interleavings_lose_nothing_and_respect_the_memory_budget() {
    let _alone = rss::alone();
    let seed = seed();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut cfg = config(rng.gen_range(1..=3), rng.gen_range(1..=3));
    // Enough for the SRS entries and a few partitions at once, so
    // synthesis has to wait for memory; and beyond it the reserve for
    // urgent partitions. (An SRS evicted between a job's proof and its
    // check would be generated anew, at random: the proof would not
    // verify against it.)
    cfg.memory.total_budget = TotalBudget::Bytes(1_350_000);
    cfg.memory.urgent_reserve = cuzk_core::config::ByteSize(150_000);
    cfg.scheduler.max_batch_size = rng.gen_range(1..=3);
    cfg.scheduler.max_batch_wait_ms = rng.gen_range(0..=30);
    cfg.scheduler.sort_by_type = rng.gen();
    cfg.pipeline.synthesis_concurrency = Some(rng.gen_range(1..=2));
    cfg.pipeline.synthesis_lookahead = rng.gen_range(1..=3);
    cfg.pipeline.enabled = rng.gen_bool(0.8);
    cfg.gpus.vram_limit = cuzk_core::config::ByteSize(if rng.gen() { 10_000 } else { 0 });
    eprintln!("config: {:?} {:?} {:?} {:?}", cfg.scheduler, cfg.pipeline, cfg.synthesis, cfg.gpus);
    let engine = Arc::new(Engine::start(cfg).unwrap());

    // Watch the accounting from outside while the load runs: its sums
    // under concurrent reservations, resizes and releases (what the engine
    // really holds: real_peak_memory_stays_within_the_memory_budget).
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut samples = 0;
            while !stop.load(Ordering::Relaxed) {
                let m = engine.memory();
                assert!(m.used_bytes <= m.budget_bytes, "memory accounting over budget: {m:?}");
                for d in engine.status().devices {
                    assert!(d.vram.used_bytes <= d.vram.total_bytes, "VRAM over budget: {d:?}");
                }
                samples += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            samples
        })
    };

    let shapes = ["synthetic:64:2", "synthetic:256:4", "mimc:1"];
    let prios = [Priority::Low, Priority::Normal, Priority::High, Priority::Critical];
    let mut jobs = Vec::new();
    let mut cancelled = Vec::new();
    for i in 0..40u64 {
        let job = builtin(shapes[rng.gen_range(0..shapes.len())], rng.gen_range(1..=3), seed.wrapping_add(i * 17));
        let mut req = ProofRequest::builtin(job).with_priority(prios[rng.gen_range(0..4)]);
        if rng.gen_bool(0.1) {
            req = req.with_request_id(format!("r{}", rng.gen_range(0..3)));
        }
        let id = engine.submit(req).unwrap();
        // A reused request id returns the live job it names: that job's
        // circuit is the one to verify.
        let job = jobs.iter().find(|(_, j)| *j == id).map_or(job, |(first, _)| *first);
        jobs.push((job, id));
        match rng.gen_range(0..10) {
            0 => {
                let (_, victim) = jobs[rng.gen_range(0..jobs.len())];
                if engine.cancel(victim).unwrap().cancelled {
                    cancelled.push(victim);
                }
            }
            1 => {
                let (_, j) = jobs[rng.gen_range(0..jobs.len())];
                let _ = engine.await_job(j, Some(Duration::from_millis(rng.gen_range(0..20)))).unwrap();
            }
            2 => std::thread::sleep(Duration::from_millis(rng.gen_range(0..30))),
            _ => {}
        }
    }
    let mut completed = std::collections::HashSet::new();
    for (job, id) in &jobs {
        match engine.await_job(*id, WAIT).unwrap() {
            JobOutcome::Completed(out) => {
                verify(&engine, job, &out);
                completed.insert(*id);
            }
            JobOutcome::Cancelled { .. } => assert!(cancelled.contains(id), "{id} cancelled without a cancel"),
            other => panic!("{id}: {other:?} (seed {seed})"),
        }
    }
    engine.shutdown(ShutdownMode::Drain);
    stop.store(true, Ordering::Relaxed);
    assert!(watcher.join().unwrap() > 0);
    let st = engine.status();
    let distinct: std::collections::HashSet<_> = jobs.iter().map(|(_, id)| *id).collect();
    assert_eq!(st.jobs_completed as usize, completed.len());
    assert_eq!(st.jobs_completed + st.jobs_cancelled, distinct.len() as u64, "every job ended exactly once");
    assert_eq!(st.jobs_failed, 0);
    assert_eq!(st.memory.partition_bytes, 0);
    assert!(st.devices.iter().all(|d| d.vram.used_bytes == 0 && d.vram.peak_bytes <= d.vram.total_bytes));
}

#[test]
fn fallback_path_when_prestaging_does_not_fit() {
    let _alone = rss::alone();
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("t.jsonl");
    let mut cfg = config(1, 2);
    cfg.gpus.vram_limit = cuzk_core::config::ByteSize(1024);
    cfg.logging.timeline = timeline.to_str().unwrap().into();
    let engine = Engine::start(cfg).unwrap();
    let job = builtin("synthetic:256:4", 3, 9);
    let (_, out) = engine.prove(ProofRequest::builtin(job), WAIT).unwrap();
    verify(&engine, &job, &expect_completed(out));
    let text = std::fs::read_to_string(&timeline).unwrap();
    assert_eq!(text.matches("\"path\":\"fallback\"").count(), 3, "{text}");
    let st = engine.status();
    assert_eq!(st.devices[0].vram.total_bytes, 1024);
    assert!(st.devices[0].vram.peak_bytes <= 1024);
}

/// Jobs of 2^14-constraint partitions through the CPU engine under a
/// memory budget of `budget` bytes, synthesis free to run far ahead of the
/// prover (64 synthesized partitions may wait for it): the process's peak
/// resident memory while they are proved (their SRS loaded before), and
/// the engine's own count of its peak.
fn proving_peak(spec: CircuitSpec, budget: u64, seed: u64) -> (u64, u64) {
    let mut cfg = config(2, 1);
    cfg.memory.total_budget = TotalBudget::Bytes(budget);
    cfg.synthesis.pce = false;
    // The prover's per-thread buckets, and the synthesis threads, the
    // same on any machine.
    (cfg.synthesis.threads, cfg.gpus.gpu_threads) = (2, 2);
    cfg.pipeline.synthesis_lookahead = 64;
    cfg.pipeline.synthesis_concurrency = Some(4);
    let engine = Engine::start(cfg).unwrap();
    let jobs: Vec<_> = (0..3).map(|i| BuiltinJob::new(spec, 8, seed.wrapping_add(i))).collect();
    // The SRS first, outside the measurement: a built-in circuit's SRS is
    // generated, with a transient several times its size that the budget
    // does not count (it reserves the SRS once generated).
    engine.preload_srs(&jobs[0].circuit_id()).unwrap();
    let peak = rss::PeakRss::start();
    let ids: Vec<_> = jobs.iter().map(|j| engine.submit(ProofRequest::builtin(*j)).unwrap()).collect();
    let outs: Vec<_> = ids.iter().map(|&id| expect_completed(engine.await_job(id, WAIT).unwrap())).collect();
    let peak = peak.peak();
    for (job, out) in jobs.iter().zip(&outs) {
        verify(&engine, job, out);
    }
    (peak, engine.memory().peak_bytes)
}

/// The engine's real memory, measured rather than its bookkeeping (which
/// never grants past the budget, so a check of it cannot fail): the
/// process's peak resident memory while jobs are proved under a budget of
/// their SRS and three partitions stays within its resident memory before
/// the engine started plus the budget plus [`MARGIN`]. The same jobs under
/// a budget with room for all of them go well past that: the check fails
/// for an engine that holds more partitions than its budget has room for.
#[test]
fn real_peak_memory_stays_within_the_memory_budget() {
    /// What the engine holds beside its budget while it proves: thread
    /// stacks, the prover's MSM buckets (2 threads), jobs and proofs, and
    /// the allocator's slack for blocks below the mmap threshold.
    const MARGIN: u64 = 8 << 20;
    let _alone = rss::alone();
    if !rss::measurable("real_peak_memory_stays_within_the_memory_budget") {
        return;
    }
    rss::unmap_large_blocks_when_freed();
    let spec: CircuitSpec = "synthetic:2^14:2".parse().unwrap();
    let seed = seed();
    let (srs, partition) = {
        let params = cuzk_core::groth16::generate_random_parameters(spec.blank(), &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
        (params.size_bytes() as u64, cuzk_core::engine::memory::partition_bytes_estimate(&params))
    };
    let budget = srs + 3 * partition;
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1 << 20) as f64);

    let before = rss::rss_bytes();
    let (peak, counted) = proving_peak(spec, budget, seed);
    eprintln!(
        "budget {} (SRS {}, 3 partitions of {}): peak RSS {} over the {} before the engine, the engine's count {}",
        mib(budget),
        mib(srs),
        mib(partition),
        mib(peak.saturating_sub(before)),
        mib(before),
        mib(counted)
    );
    assert!(
        peak <= before + budget + MARGIN,
        "peak RSS {} over the {} before the engine: beyond the budget of {} and the margin of {}",
        mib(peak.saturating_sub(before)),
        mib(before),
        mib(budget),
        mib(MARGIN)
    );

    let before = rss::rss_bytes();
    let (unbounded, counted) = proving_peak(spec, 64 * budget, seed);
    eprintln!(
        "the same jobs under {}: peak RSS {} over the {} before, the engine's count {}",
        mib(64 * budget),
        mib(unbounded.saturating_sub(before)),
        mib(before),
        mib(counted)
    );
    assert!(
        unbounded > before + budget + MARGIN,
        "with room for every partition the peak ({} over {}) stays within {} too: this workload cannot show an engine over its budget",
        mib(unbounded.saturating_sub(before)),
        mib(before),
        mib(budget + MARGIN)
    );
}
