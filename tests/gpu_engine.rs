//! The engine's CUDA backend: every interlock path (pre-staged with the SRS
//! resident in VRAM, pre-staged with points streamed from host memory, and
//! the fallback within a small VRAM grant, with the H term on the CPU or on
//! the device), for partitions with a, b, c and for witness-only ones with
//! their PCE, gives the CPU prover's bytes for the same r and s; and the
//! engine proves on the GPU end to end (its partitions after the first of
//! each circuit synthesized witness-only, a, b, c computed on the device),
//! with a VRAM limit that forces the fallback too; a `.params` file read
//! slice by slice into a device's copy is the upload of its parameters,
//! and the engine loads an SRS the card keeps resident straight to it.
//! Skipped, visibly, without a GPU.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::config::{ByteSize, Config, TotalBudget};
use cuzk_core::engine::gpu_backend::GpuBackend;
use cuzk_core::engine::interlock::VramBudget;
use cuzk_core::engine::memory::MemoryBudget;
use cuzk_core::engine::srs_handle::SrsHandle;
use cuzk_core::engine::{
    BuiltinJob, Engine, JobOutcome, PartitionedCircuit, ProofRequest, ProveInput, ProverBackend, ProverError, ShutdownMode,
};
use cuzk_core::groth16::gpu_srs::DeviceSrs;
use cuzk_core::groth16::{self, prepare_verifying_key, verify_proof, Proof};
use cuzk_core::srs::{stream_host_bytes, KeyShape, ParamsFile, ReadOptions};
use cuzk_core::Fr;
use cuzk_tests::vram;
use ff::Field;
use rand::SeedableRng;
use std::sync::Arc;
use std::time::Duration;

fn proofs_via(b: &GpuBackend, input: &ProveInput<'_>, fallback: Option<u64>) -> Vec<Proof> {
    let computed = match fallback {
        None => {
            b.keep_resident(0, input).unwrap();
            let staged = b.prestage(0, input).unwrap();
            b.compute(0, staged, input).unwrap()
        }
        Some(granted) => b.compute_fallback(0, granted, input).unwrap(),
    };
    b.epilogue(0, computed).unwrap()
}

#[test]
fn every_backend_path_gives_the_cpu_bytes() {
    let _device = vram::alone();
    if cuzk_sys::test_device("every_backend_path_gives_the_cpu_bytes").is_none() {
        assert!(GpuBackend::new().is_err(), "no device, yet the GPU backend started");
        return;
    }
    let seed = cuzk_sys::test_seed("gpu_engine");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    for (spec, batch) in [("synthetic:5001:3", 3), ("mimc:300", 2), ("sha256:1", 1), ("synthetic:70000:5", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap());
        let params = srs.host_points_now().unwrap();
        let assignments: Vec<_> = (0..batch).map(|i| cuzk_core::cs::synthesize(spec.instance(seed + i)).unwrap()).collect();
        let cpu = groth16::prove_synthesized_deterministic(&params, &assignments, &vec![(r, s); batch as usize]).unwrap();
        let cpu: Vec<_> = cpu.iter().map(|p| p.to_bytes()).collect();
        let pce = Arc::new(cuzk_core::pce::record("c", spec.instance(seed)).unwrap());
        let witness_only: Vec<_> = (0..batch)
            .map(|i| pce.witness_assignment(cuzk_core::cs::generate_witness(spec.instance(seed + i)).unwrap()).unwrap())
            .collect();

        let vram = VramBudget::new(64 << 30);
        let resident = GpuBackend::new().unwrap().with_fixed_randomness(r, s);
        let streamed = GpuBackend::new().unwrap().with_fixed_randomness(r, s).without_resident_srs();
        for (what, assignments, pce) in [("with a, b, c", &assignments, None), ("witness-only", &witness_only, Some(&pce))] {
            let input = ProveInput {
                srs: &srs,
                assignments,
                vram: &vram,
                pce,
                host_memory: None,
                h_copies_counted: true,
                stop: cuzk_core::groth16::StopCheck::NEVER,
            };
            let need = streamed.vram_needed(0, &input);
            let paths: [(&str, &GpuBackend, Option<u64>); 5] = [
                ("prestaged, SRS resident", &resident, None),
                ("prestaged again, SRS reused", &resident, None),
                ("prestaged, SRS streamed", &streamed, None),
                ("fallback, H on the device", &streamed, Some(need)),
                ("fallback, H on the CPU, small MSM chunks", &streamed, Some(1 << 20)),
            ];
            for (path, backend, fallback) in paths {
                let got: Vec<_> = proofs_via(backend, &input, fallback).iter().map(|p| p.to_bytes()).collect();
                assert_eq!(got, cpu, "{spec:?} {what}: path '{path}' differs from the CPU prover");
            }
            println!("GPU backend {spec:?} x{batch} {what}: all 5 paths byte-identical to the CPU prover (need {need} B)");
        }
        assert!(vram.usage().used_bytes > 0, "the resident SRS and matrices hold budget");
    }
}

/// One witness-only 2^17 circuit (fresh random inputs), its params and
/// PCE, and the CPU prover's proof of it with the r and s given.
struct WitnessOnlyCase {
    r: Fr,
    s: Fr,
    srs: Arc<SrsHandle>,
    cpu: Vec<Proof>,
    pce: Arc<cuzk_core::pce::Pce>,
    witness_only: [cuzk_core::cs::ProvingAssignment; 1],
}

fn witness_only_case() -> WitnessOnlyCase {
    let seed = cuzk_sys::test_seed("gpu_engine");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
    let spec: CircuitSpec = "synthetic:70001:5".parse().unwrap();
    let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap());
    let params = srs.host_points_now().unwrap();
    let cpu =
        groth16::prove_synthesized_deterministic(&params, &[cuzk_core::cs::synthesize(spec.instance(seed)).unwrap()], &[(r, s)]).unwrap();
    let pce = Arc::new(cuzk_core::pce::record("c", spec.instance(seed)).unwrap());
    let witness_only = [pce.witness_assignment(cuzk_core::cs::generate_witness(spec.instance(seed)).unwrap()).unwrap()];
    WitnessOnlyCase { r, s, srs, cpu, pce, witness_only }
}

/// A plan that finds no room for z on the device computes a, b, c of
/// witness-only circuits on the host, and one with no room for the H
/// buffers the H term there too: it reserves them, and the H term's working
/// copies of a, b, c, in the engine's host budget first (the engine counted
/// the witness only), and fails the call, naming that, where the budget has
/// no room (instead of the host running out of memory); with room, the CPU
/// prover's bytes, and the reservations released after the call. Where the
/// engine's reservation counted the copies already, only a, b, c are
/// reserved.
#[test]
fn host_abc_of_witness_only_circuits_is_reserved_in_the_host_budget() {
    let _device = vram::alone();
    if cuzk_sys::test_device("host_abc_of_witness_only_circuits_is_reserved_in_the_host_budget").is_none() {
        return;
    }
    let WitnessOnlyCase { r, s, srs, cpu, pce, witness_only } = witness_only_case();
    let abc_bytes = 3 * 32 * witness_only[0].num_constraints() as u64;
    let h_copies = 3 * 32 * witness_only[0].num_constraints().next_power_of_two() as u64;
    let vram = VramBudget::new(64 << 30);
    let backend = GpuBackend::new().unwrap().with_fixed_randomness(r, s).without_resident_srs();
    // A grant too small for the H buffers: H on the CPU, a, b, c on the host.
    let small = 1 << 20;
    let tight = MemoryBudget::new(abc_bytes + h_copies - 1);
    let input = ProveInput {
        srs: &srs,
        assignments: &witness_only,
        vram: &vram,
        pce: Some(&pce),
        host_memory: Some(&tight),
        h_copies_counted: false,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    match backend.compute_fallback(0, small, &input) {
        Err(e @ ProverError::OutOfHostMemory(_)) => assert!(e.to_string().contains("beyond the engine's budget"), "{e}"),
        Err(e) => panic!("expected out of host memory, got {e}"),
        Ok(_) => panic!("a, b, c and the H term's copies computed on the host beyond a budget of {} B", abc_bytes + h_copies - 1),
    }
    let room = MemoryBudget::new(abc_bytes + h_copies);
    let input = ProveInput { host_memory: Some(&room), ..input };
    let computed = backend.compute_fallback(0, small, &input).unwrap();
    assert_eq!(room.usage().used_bytes, 0, "the host a, b, c reservation outlived the call");
    assert_eq!(room.usage().peak_bytes, abc_bytes + h_copies);
    let got = backend.epilogue(0, computed).unwrap();
    assert_eq!(got[0].to_bytes(), cpu[0].to_bytes());
    let counted = MemoryBudget::new(abc_bytes);
    let input = ProveInput { host_memory: Some(&counted), h_copies_counted: true, ..input };
    let got = backend.epilogue(0, backend.compute_fallback(0, small, &input).unwrap()).unwrap();
    assert_eq!(
        (counted.usage().peak_bytes, got[0].to_bytes()),
        (abc_bytes, cpu[0].to_bytes()),
        "the copies counted by the engine: a, b, c alone reserved"
    );
    println!("witness-only fallback with a, b, c and the H term on the host: {abc_bytes} + {h_copies} B reserved, refused one byte short, CPU bytes");
}

/// The backend says it computes the H term on the device where each
/// device's VRAM budget holds the H buffers beside the smallest MSM, the
/// size a plan with that whole budget needs for it, and not below.
#[test]
fn h_term_on_device_follows_the_vram_budget() {
    let _device = vram::alone();
    if cuzk_sys::test_device("h_term_on_device_follows_the_vram_budget").is_none() {
        return;
    }
    use cuzk_core::engine::interlock::DeviceLocks;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(cuzk_sys::test_seed("h_term_on_device_follows_the_vram_budget"));
    let spec: CircuitSpec = "synthetic:70001:5".parse().unwrap();
    let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap());
    let backend = GpuBackend::new().unwrap().without_resident_srs();
    let on = |vram: u64| backend.h_term_on_device(&srs, &[DeviceLocks::new(0, "test".into(), vram)]);
    assert!(on(16 << 30), "16 GiB holds a 2^17 circuit's H buffers");
    assert!(!on(1 << 20), "1 MiB does not hold a 2^17 circuit's H buffers");
    // The threshold is where a plan with that grant puts the H term.
    let (mut lo, mut hi) = (1u64 << 20, 16u64 << 30);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if on(mid) {
            hi = mid
        } else {
            lo = mid
        }
    }
    let assignments = [cuzk_core::cs::synthesize(spec.instance(1)).unwrap()];
    let vram = VramBudget::new(64 << 30);
    // No host memory to spare: an H term on the host, which the engine
    // did not count, is refused.
    let none = MemoryBudget::new(0);
    let input = ProveInput {
        srs: &srs,
        assignments: &assignments,
        vram: &vram,
        pce: None,
        host_memory: Some(&none),
        h_copies_counted: false,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    let h = cuzk_core::groth16::gpu_prover::GpuProver::h_bytes(assignments[0].num_constraints()).unwrap();
    assert!(hi > h && hi < h + (256 << 20), "threshold {hi} B against H buffers of {h} B");
    backend.epilogue(0, backend.compute_fallback(0, hi, &input).unwrap()).unwrap();
    match backend.compute_fallback(0, hi - 1, &input) {
        Err(e @ ProverError::OutOfHostMemory(_)) => assert!(e.to_string().contains("H term on the host"), "{e}"),
        Err(e) => panic!("expected the H term's copies refused, got {e}"),
        Ok(_) => panic!("one byte below the threshold, the H term ran on the device or its copies were not reserved"),
    }
    println!("H term on the device from a VRAM budget of {hi} B (H buffers {h} B)");
}

/// The plan report's device plan (`ProverBackend::device_plans`) says what
/// the calls then do: the SRS streamed from the host where the VRAM budget
/// is too small to keep it (naming a budget that would, which does), and
/// resident where `keep_resident` makes it so; the working set is what a
/// worker reserves (`vram_needed`) with the points where they then are.
#[test]
fn device_plans_say_what_the_calls_do() {
    let _device = vram::alone();
    if cuzk_sys::test_device("device_plans_say_what_the_calls_do").is_none() {
        return;
    }
    use cuzk_core::engine::interlock::DeviceLocks;
    use cuzk_core::engine::plan_report::SrsAt;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(cuzk_sys::test_seed("device_plans_say_what_the_calls_do"));
    let spec: CircuitSpec = "synthetic:70001:5".parse().unwrap();
    let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap());
    let assignments = [cuzk_core::cs::synthesize(spec.instance(1)).unwrap()];
    let backend = GpuBackend::new().unwrap();
    let plan_and_keep = |budget: u64| {
        let dev = DeviceLocks::new(0, "test".into(), budget);
        let plan = backend.device_plans(&srs, None, false, std::slice::from_ref(&dev)).remove(0).gpu.expect("a GPU plan");
        let input = ProveInput {
            srs: &srs,
            assignments: &assignments,
            vram: &dev.vram,
            pce: None,
            host_memory: None,
            h_copies_counted: true,
            stop: cuzk_core::groth16::StopCheck::NEVER,
        };
        backend.keep_resident(0, &input).unwrap();
        assert_eq!(plan.working_set, backend.vram_needed(0, &input), "the working set a worker reserves, budget {budget} B");
        (plan, dev.vram.usage().used_bytes)
    };
    // Streamed first: a resident copy, once made, stays while `srs` lives.
    let (small, kept) = plan_and_keep(16 << 20);
    let SrsAt::Host { resident_needs: Some(needs), .. } = small.srs else { panic!("16 MiB keeps a 2^17 SRS resident: {small:?}") };
    assert_eq!(kept, 0, "nothing made resident where the plan streams the points");
    assert!(needs > 16 << 20, "{needs} B");
    let (large, kept) = plan_and_keep(needs);
    let SrsAt::Vram { bytes } = large.srs else { panic!("the budget the plan named does not keep the SRS resident: {large:?}") };
    assert_eq!(kept, bytes, "keep_resident made it resident, with the bytes the plan said");
    assert!(large.working_set <= small.working_set, "points on the device: no staging in the MSM workspace");
    println!(
        "device plan: streamed within 16 MiB (resident from {needs} B), resident {bytes} B; working sets {} / {} B",
        small.working_set, large.working_set
    );
}

fn engine_config(gpu_workers: usize, vram_limit: u64, pce: bool, timeline: &std::path::Path) -> Config {
    let mut c = Config::default();
    c.memory.total_budget = TotalBudget::Bytes(8 << 30);
    c.synthesis.partition_workers = 4;
    c.gpus.gpu_workers_per_device = gpu_workers;
    c.gpus.vram_limit = ByteSize(vram_limit);
    c.scheduler.max_batch_wait_ms = 20;
    c.srs.param_cache = "/nonexistent-cuzk-test-params".into();
    c.logging.timeline = timeline.display().to_string();
    c.synthesis.pce = pce;
    c
}

/// The timeline's `ev` events.
fn events<'t>(timeline: &'t str, ev: &'t str) -> impl Iterator<Item = serde_json::Value> + 't {
    timeline.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()).filter(move |v| v["ev"] == ev)
}

/// Each unit's `path` in the timeline's `ev` events.
fn paths(timeline: &str, ev: &str) -> Vec<String> {
    events(timeline, ev).map(|v| v["path"].as_str().unwrap_or("").to_string()).collect()
}

/// `jobs` submitted to `engine`, each awaited (5 min at most) and every
/// partition's proof verified.
fn prove_and_verify(engine: &Engine, jobs: &[BuiltinJob]) {
    let ids: Vec<_> = jobs.iter().map(|j| engine.submit(ProofRequest::builtin(*j)).unwrap()).collect();
    for (job, id) in jobs.iter().zip(ids) {
        let out = match engine.await_job(id, Some(Duration::from_secs(300))).unwrap() {
            JobOutcome::Completed(p) => p,
            other => panic!("{job:?}: {other:?}"),
        };
        let params = engine.parameters(&job.circuit_id()).unwrap();
        let pvk = prepare_verifying_key(&params.vk);
        for (p, proof) in Proof::many_from_bytes(&out.proof).unwrap().iter().enumerate() {
            assert!(verify_proof(&pvk, proof, &job.public_inputs(p)).unwrap(), "{job:?} partition {p} does not verify");
        }
    }
}

/// Jobs of several shapes through the engine on the GPU; every proof
/// verifies. Returns the timeline's `gpu_end` and `synth_end` paths.
fn run_engine(gpu_workers: usize, vram_limit: u64, pce: bool) -> (Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let backend = Arc::new(GpuBackend::new().unwrap());
    let engine = Engine::start_with_backend(engine_config(gpu_workers, vram_limit, pce, &timeline), backend).unwrap();
    assert_eq!(engine.status().backend, "cuda");
    let seed = cuzk_sys::test_seed("run_engine");
    let jobs: Vec<BuiltinJob> = ["synthetic:20000:3", "mimc:200", "synthetic:4097:2", "synthetic:20000:3"]
        .iter()
        .enumerate()
        .map(|(i, s)| BuiltinJob::new(s.parse().unwrap(), 1 + i % 3, seed.wrapping_add(i as u64)))
        .collect();
    prove_and_verify(&engine, &jobs);
    let st = engine.status();
    assert!(st.devices.iter().all(|d| d.vram.peak_bytes <= d.vram.total_bytes), "VRAM budget exceeded: {:?}", st.devices);
    engine.shutdown(ShutdownMode::Drain);
    let text = std::fs::read_to_string(&timeline).unwrap();
    (paths(&text, "gpu_end"), paths(&text, "synth_end"))
}

/// Several GPUs (issue 54 item 2): the partitions of two jobs spread over
/// every GPU of the host, all proved from the one host SRS (one entry in
/// the engine's SRS manager) within each GPU's own VRAM budget; every
/// proof verifies. Skipped with fewer than two GPUs.
#[test]
fn several_gpus_prove_from_one_host_srs() {
    const TEST: &str = "several_gpus_prove_from_one_host_srs";
    let _device = vram::alone();
    if cuzk_sys::test_device(TEST).is_none() {
        return;
    }
    let n = cuzk_sys::device_count().unwrap() as usize;
    if n < 2 {
        // A one-GPU host is a working GPU host: not a failure even under
        // CUZK_REQUIRE_GPU=1.
        cuzk_sys::test_skip_on_this_device(&format!("{TEST}: one CUDA device, two or more needed"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let backend = Arc::new(GpuBackend::new().unwrap());
    let engine = Engine::start_with_backend(engine_config(2, 0, true, &timeline), backend).unwrap();
    assert_eq!(engine.status().devices.len(), n);
    let seed = cuzk_sys::test_seed(TEST);
    let jobs: Vec<BuiltinJob> =
        (0..2).map(|i| BuiltinJob::new("synthetic:2^16:2".parse().unwrap(), 4 * n, seed.wrapping_add(100 * i))).collect();
    prove_and_verify(&engine, &jobs);
    let st = engine.status();
    assert_eq!(st.srs.len(), 1, "one host SRS for every GPU: {:?}", st.srs);
    for d in &st.devices {
        assert!(d.vram.peak_bytes > 0 && d.vram.peak_bytes <= d.vram.total_bytes, "GPU {}: its own budget {:?}", d.ordinal, d.vram);
    }
    engine.shutdown(ShutdownMode::Drain);
    let text = std::fs::read_to_string(&timeline).unwrap();
    let mut per_gpu = vec![0usize; n];
    for v in events(&text, "gpu_end") {
        per_gpu[v["gpu"].as_u64().unwrap() as usize] += 1;
    }
    assert!(per_gpu.iter().all(|&c| c > 0), "every GPU proved partitions: {per_gpu:?}");
    println!("{TEST}: {n} GPUs, partitions per GPU {per_gpu:?}, one host SRS, all proofs verify");
}

#[test]
fn engine_proves_on_the_gpu() {
    let _device = vram::alone();
    if cuzk_sys::test_device("engine_proves_on_the_gpu").is_none() {
        return;
    }
    for gw in [1, 2] {
        let (paths, synth) = run_engine(gw, 0, true);
        assert!(!paths.is_empty() && paths.iter().all(|p| p == "prestaged"), "gw={gw}: paths {paths:?}");
        // Each circuit's first partition records its PCE (others meanwhile
        // synthesize classically); from then on, witness-only: no a, b, c
        // on the host, never the CPU SpMV.
        assert!(synth.iter().any(|p| p == "pce-witness"), "gw={gw}: synthesis paths {synth:?}");
        assert!(!synth.iter().any(|p| p == "pce"), "gw={gw}: the CPU SpMV ran: {synth:?}");
        println!("engine on the GPU gw={gw}: {} units, all pre-staged, all proofs verify; synthesis {synth:?}", paths.len());
    }
    let (_, synth) = run_engine(1, 0, false);
    assert!(synth.iter().all(|p| p == "classic"), "pce off: {synth:?}");
}

/// Where the card keeps the SRS resident, the engine loads it straight to
/// the device from its file, a slice at a time (the host never holds it
/// whole), and its host points start released: partitions and jobs prove
/// from the device's copy without reading them, and the host budget holds
/// no SRS. Where the points stream from host memory (no resident SRS) it
/// loads whole and they stay. With no `.pce` file yet (the matrices'
/// size unknown as it loads) it loads whole, and the host points go once
/// the card has its copy. Every proof verifies (against the key written
/// to the file).
#[test]
fn the_srs_host_points_go_where_the_gpu_keeps_it_resident() {
    const TEST: &str = "the_srs_host_points_go_where_the_gpu_keeps_it_resident";
    let _device = vram::alone();
    let Some(device) = cuzk_sys::test_device(TEST) else { return };
    let seed = cuzk_sys::test_seed(TEST);
    let spec: CircuitSpec = "synthetic:20000:3".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let job = |i: u64| BuiltinJob::new(spec, 3, seed.wrapping_add(i));
    let params = groth16::generate_random_parameters(spec.blank(), &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed)).unwrap();
    params.write_file(&dir.path().join(format!("{}.params", job(0).circuit_id()))).unwrap();
    // Its `.pce` file written ahead: the size of the matrices the card
    // keeps beside the SRS is then known as the SRS loads (with none, the
    // first partition records them, and the SRS loads whole).
    let pce_path = dir.path().join(format!("{}.pce", job(0).circuit_id()));
    cuzk_core::pce::file::write(&cuzk_core::pce::record(&job(0).circuit_id(), spec.blank()).unwrap(), &pce_path).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    let whole = params.size_bytes() as u64;
    for (resident, pce_file) in [(true, true), (false, true), (true, false)] {
        if !pce_file {
            std::fs::remove_file(&pce_path).unwrap();
        }
        let backend = if resident { GpuBackend::new().unwrap() } else { GpuBackend::new().unwrap().without_resident_srs() };
        let mut cfg = engine_config(2, 0, true, &dir.path().join("timeline.jsonl"));
        cfg.srs.param_cache = dir.path().to_path_buf();
        // Slices well under the SRS: a load straight to the device reads
        // it in many.
        cfg.srs.stream_slice = ByteSize(STREAM_SLICE as u64);
        // One device: the points go once every device has its copy.
        cfg.gpus.devices = vec![device as u32];
        let engine = Engine::start_with_backend(cfg, Arc::new(backend)).unwrap();
        for i in 0..2 {
            let out = match engine.prove(ProofRequest::builtin(job(i)), Some(Duration::from_secs(300))).unwrap().1 {
                JobOutcome::Completed(p) => p,
                other => panic!("resident={resident} pce_file={pce_file} job {i}: {other:?}"),
            };
            for (p, proof) in Proof::many_from_bytes(&out.proof).unwrap().iter().enumerate() {
                let ok = verify_proof(&pvk, proof, &job(i).public_inputs(p)).unwrap();
                assert!(ok, "resident={resident} pce_file={pce_file} job {i} partition {p}");
            }
        }
        let st = engine.status();
        // The card has room for the SRS beside the matrices: kept resident
        // however it loaded, the host points go.
        let expected = if resident { 0 } else { whole };
        let case = format!("resident={resident} pce_file={pce_file}");
        assert_eq!((st.srs[0].host_bytes, st.memory.srs_bytes), (expected, expected), "{case}: the SRS's host bytes");
        let peak = st.memory.srs_peak_bytes;
        if resident && pce_file {
            // Loaded straight to the device: the host never held more of
            // it than the slices.
            assert!(peak > 0 && peak <= stream_host_bytes(STREAM_SLICE), "{case}: the SRS's host peak {peak} B");
        } else {
            // Streamed from host memory, or the matrices' size not known
            // as it loaded: loaded whole.
            assert!(peak >= whole, "{case}: loaded whole, peak {peak} B");
        }
        engine.shutdown(ShutdownMode::Drain);
        println!("{case}: 2 jobs proved and verified; the SRS holds {expected} B of host memory, {peak} B at its peak");
    }
}

/// The slices of the loads straight to the device in these tests.
const STREAM_SLICE: usize = 64 << 10;

/// A `.params` file read slice by slice into a device's copy
/// (`DeviceSrs::allocate` and `fill`, as the engine loads an SRS straight
/// to the devices that keep it) holds the bytes `DeviceSrs::upload` of
/// the same parameters puts there, for slices of several sizes (one under
/// a G2 point's size, odd ones, one over the whole file).
#[test]
fn a_params_file_streamed_to_the_device_is_the_upload_of_its_parameters() {
    const TEST: &str = "a_params_file_streamed_to_the_device_is_the_upload_of_its_parameters";
    let _device = vram::alone();
    let Some(device) = cuzk_sys::test_device(TEST) else { return };
    let seed = cuzk_sys::test_seed(TEST);
    let spec: CircuitSpec = "synthetic:20000:3".parse().unwrap();
    let params = groth16::generate_random_parameters(spec.blank(), &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.params");
    params.write_file(&path).unwrap();
    let uploaded = DeviceSrs::upload(device, &params).unwrap().download().unwrap();
    assert_eq!(uploaded.iter().map(Vec::len).sum::<usize>() as u64, DeviceSrs::bytes(&params));
    let stream = cuzk_sys::Stream::new(device).unwrap();
    for slice in [100, 4099, STREAM_SLICE, 1 << 30] {
        let file = ParamsFile { path: path.clone(), opts: ReadOptions::default(), trusted_by: None };
        let mut copy = DeviceSrs::allocate(device, file.head().unwrap().counts()).unwrap();
        let head = file.stream(slice, &mut |s| copy.fill(&stream, &s)).unwrap();
        assert_eq!((&head.vk, head.counts()), (&params.vk, params.counts()));
        let streamed = copy.download().unwrap();
        for (i, (got, want)) in streamed.iter().zip(&uploaded).enumerate() {
            assert!(got == want, "{slice} B slices: vector {i} differs from the upload");
        }
    }
    println!("{TEST}: slices of 100 B to 1 GiB give the upload's bytes");
}

#[test]
fn engine_vram_limit_forces_the_fallback() {
    let _device = vram::alone();
    if cuzk_sys::test_device("engine_vram_limit_forces_the_fallback").is_none() {
        return;
    }
    // Just under what a mimc:200 unit reserves (its pre-staging estimate
    // on this device), so that unit takes the fallback whatever the other
    // worker holds. (A fixed 300 MiB relied on both workers reserving at
    // once, and sometimes neither fell back.)
    let spec: CircuitSpec = "mimc:200".parse().unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap());
    let assignments = vec![cuzk_core::cs::synthesize(spec.instance(1)).unwrap()];
    let vram = VramBudget::new(64 << 30);
    let input = ProveInput {
        srs: &srs,
        assignments: &assignments,
        vram: &vram,
        pce: None,
        host_memory: None,
        h_copies_counted: true,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    let limit = GpuBackend::new().unwrap().vram_needed(0, &input) - 1;
    let (paths, _) = run_engine(2, limit, true);
    assert!(paths.iter().any(|p| p == "fallback"), "paths {paths:?}");
    println!("engine with vram_limit={limit} B (mimc:200's estimate less 1): paths {paths:?}, all proofs verify");
}

/// Where a VRAM budget that holds the H term beside the smallest MSM has
/// no room for a witness-only circuit's matrices (a 16 GiB card at 2^27),
/// the backend keeps the circuit ready to stream them from host memory
/// (`abc_on_device` gives a lease), and its fallback proves with them
/// streamed: the CPU prover's bytes, and no a, b, c computed on the host
/// (the host budget has no room for them). In small, the rule keeps the
/// matrices wherever the H term fits (the smallest MSM workspace outweighs
/// them and the working set they stay beside), so the room is taken: all
/// of the budget but less than their bytes is held while the backend
/// places them, as another call's reservation would.
#[test]
fn witness_only_circuits_stream_their_matrices_where_they_do_not_fit() {
    let _device = vram::alone();
    if cuzk_sys::test_device("witness_only_circuits_stream_their_matrices_where_they_do_not_fit").is_none() {
        return;
    }
    use cuzk_core::engine::interlock::DeviceLocks;
    let WitnessOnlyCase { r, s, srs, cpu, pce, witness_only } = witness_only_case();
    let backend = GpuBackend::new().unwrap().with_fixed_randomness(r, s).without_resident_srs();
    // The least budget that holds the H term on the device.
    let on = |vram: u64| backend.h_term_on_device(&srs, &[DeviceLocks::new(0, "test".into(), vram)]);
    let (mut lo, mut hi) = (1u64 << 20, 16u64 << 30);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if on(mid) {
            hi = mid
        } else {
            lo = mid
        }
    }
    let device = [DeviceLocks::new(0, "test".into(), hi)];
    let matrices = cuzk_core::pce::gpu::GpuPce::device_bytes(&pce).unwrap();
    let held = device[0].vram.try_reserve(device[0].vram.free() - matrices + 1).expect("an empty budget");
    let lease = backend.abc_on_device(&pce, &srs, &device);
    drop(held);
    assert!(lease.is_some(), "no lease: the matrices neither resident nor streamed in {hi} B");
    assert!(backend.streams_matrices(0, &pce), "the matrices resident in {hi} B with less than their bytes free: no streaming to test");
    let none = MemoryBudget::new(0);
    let input = ProveInput {
        srs: &srs,
        assignments: &witness_only,
        vram: &device[0].vram,
        pce: Some(&pce),
        host_memory: Some(&none),
        h_copies_counted: true,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    let got = backend.epilogue(0, backend.compute_fallback(0, hi, &input).unwrap()).unwrap();
    assert_eq!(got[0].to_bytes(), cpu[0].to_bytes(), "streamed within {hi} B");
    drop(lease);
    println!("witness-only circuit proved with its matrices streamed within {hi} B: CPU bytes");
}

/// A card with room for a witness-only circuit's matrices and A's points
/// beside the working set its partitions run in with the points from host
/// memory, but not for the whole SRS (a 32 GiB PoRep on a 48 GB card):
/// the plan report says A's points are resident, `keep_resident` makes
/// them so with the bytes it said, and the fallback, its A MSM reading
/// them and every other query streaming, gives the CPU prover's bytes.
#[test]
fn a_points_resident_where_the_srs_is_not() {
    let _device = vram::alone();
    if cuzk_sys::test_device("a_points_resident_where_the_srs_is_not").is_none() {
        return;
    }
    use cuzk_core::engine::interlock::DeviceLocks;
    use cuzk_core::engine::plan_report::SrsAt;
    let WitnessOnlyCase { r, s, srs, cpu, pce, witness_only } = witness_only_case();
    // A fresh backend per budget: each keeps what its budget placed.
    let placed = |budget: u64| {
        let backend = GpuBackend::new().unwrap().with_fixed_randomness(r, s);
        let device = [DeviceLocks::new(0, "test".into(), budget)];
        let lease = backend.abc_on_device(&pce, &srs, &device);
        let plan = backend.device_plans(&srs, Some(&pce), true, &device).remove(0).gpu.expect("a GPU plan");
        (backend, device, lease, plan.srs)
    };
    // The least budget that keeps more than the matrices: A's points, or
    // (where no budget keeps A alone) the whole SRS.
    let (mut lo, mut hi) = (1u64 << 20, 4u64 << 30);
    while hi - lo > 1 << 16 {
        let mid = lo + (hi - lo) / 2;
        if matches!(placed(mid).3, SrsAt::Host { a_vram: None, .. }) {
            lo = mid
        } else {
            hi = mid
        }
    }
    let (backend, device, lease, at) = placed(hi);
    let SrsAt::Host { a_vram: Some(a_bytes), .. } = at else { panic!("no budget keeps A's points without the SRS: {at:?} at {hi} B") };
    assert!(lease.is_some(), "A's points planned without the matrices resident");
    let input = ProveInput {
        srs: &srs,
        assignments: &witness_only,
        vram: &device[0].vram,
        pce: Some(&pce),
        host_memory: None,
        h_copies_counted: true,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    let before = device[0].vram.usage().used_bytes;
    backend.keep_resident(0, &input).unwrap();
    assert_eq!(device[0].vram.usage().used_bytes - before, a_bytes, "A's points kept with the bytes the plan said");
    assert!(backend.keeps_query_points(0, &srs), "keep_resident kept no query points");
    let granted = device[0].vram.free();
    let got = backend.epilogue(0, backend.compute_fallback(0, granted, &input).unwrap()).unwrap();
    assert_eq!(got[0].to_bytes(), cpu[0].to_bytes(), "A's points resident within {hi} B");
    drop(lease);
    println!("A's points ({a_bytes} B) resident without the SRS within {hi} B, fallback granted {granted} B: CPU bytes");
}

/// `job`'s circuit's parameters (random, from `params_seed`) written in
/// `dir`, where an engine whose param cache it is looks for them, and the
/// working set on `device` of one of its circuits (`instance_seed`'s),
/// with its points in host memory.
fn write_params_and_need(
    backend: &GpuBackend,
    device: i32,
    job: &BuiltinJob,
    params_seed: u64,
    instance_seed: u64,
    dir: &std::path::Path,
) -> u64 {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(params_seed);
    let srs = SrsHandle::in_memory("test", groth16::generate_random_parameters(job.spec.blank(), &mut rng).unwrap());
    srs.host_points_now().unwrap().write_file(&dir.join(format!("{}.params", job.circuit_id()))).unwrap();
    let assignments = [cuzk_core::cs::synthesize(job.spec.instance(instance_seed)).unwrap()];
    let input = ProveInput {
        srs: &srs,
        assignments: &assignments,
        vram: &VramBudget::new(64 << 30),
        pce: None,
        host_memory: None,
        h_copies_counted: true,
        stop: cuzk_core::groth16::StopCheck::NEVER,
    };
    backend.vram_needed(device as u32, &input)
}

/// The engine's real VRAM under `gpus.vram_limit`, measured on the device
/// rather than by the engine's count (which never grants past its budget,
/// so a check of it cannot fail): while jobs of a 2^18-constraint circuit
/// are proved under a limit of a quarter of what one partition's working
/// set needs (every partition takes the fallback, planned within what the
/// budget grants it; the SRS and matrices stay on the host), the memory in
/// use on the device rises by at most the limit and [`VRAM_MARGIN`] above
/// what it was before the engine started, its backend made (the CUDA
/// context, NTT tables and the MSMs' local memory in place: what the
/// backend takes before it measures the budget). A plan that ignored the
/// limit would take the working set, more than that.
#[test]
fn engine_real_vram_stays_within_the_vram_limit() {
    /// What the device gives beyond the bytes the engine reserves: the
    /// kernels' code and constants, loaded on their first launch (CUDA's
    /// lazy loading; a few MiB for all of them), and cudaMalloc's rounding
    /// of each buffer to whole 2 MiB pages (about ten buffers live per
    /// worker, two workers).
    const VRAM_MARGIN: u64 = 64 << 20;
    const TEST: &str = "engine_real_vram_stays_within_the_vram_limit";
    let _device = vram::alone();
    let Some(device) = cuzk_sys::test_device(TEST) else { return };
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1 << 20) as f64);
    let seed = cuzk_sys::test_seed(TEST);
    let spec: CircuitSpec = "synthetic:2^18:2".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let job = |i: u64| BuiltinJob::new(spec, 3, seed.wrapping_add(i));
    // Its parameters written where the engine looks for them, so that the
    // estimate below and the engine's proofs use the same ones.
    let backend = Arc::new(GpuBackend::new().unwrap());
    let need = write_params_and_need(&backend, device, &job(0), seed, seed, dir.path());
    let limit = need / 4;
    assert!(need > limit + VRAM_MARGIN, "a working set of {} is too small to tell a plan over its limit", mib(need));

    let mut cfg = engine_config(2, limit, true, &dir.path().join("timeline.jsonl"));
    cfg.srs.param_cache = dir.path().to_path_buf();
    let before = vram::used_bytes(device);
    let peak = vram::VramPeak::start(device);
    let engine = Engine::start_with_backend(cfg, backend).unwrap();
    let jobs: Vec<_> = (1..=2).map(job).collect();
    prove_and_verify(&engine, &jobs);
    engine.shutdown(ShutdownMode::Drain);
    let peak = peak.peak();
    let text = std::fs::read_to_string(dir.path().join("timeline.jsonl")).unwrap();
    let fallbacks = paths(&text, "gpu_end").iter().filter(|p| *p == "fallback").count();
    println!(
        "engine VRAM under vram_limit={} ({limit} B, a quarter of a partition's {}): peak {} over the {} in use before the engine (bound {}); {fallbacks} fallback units",
        mib(limit),
        mib(need),
        mib(peak.saturating_sub(before)),
        mib(before),
        mib(limit + VRAM_MARGIN)
    );
    assert!(fallbacks > 0, "no unit took the fallback under a quarter of its working set");
    assert!(
        peak <= before + limit + VRAM_MARGIN,
        "the device's memory in use rose by {} under vram_limit={} (margin {})",
        mib(peak.saturating_sub(before)),
        mib(limit),
        mib(VRAM_MARGIN)
    );
}

/// Partitions of the job `id` in `phase` now.
fn partitions_in(engine: &Engine, id: cuzk_core::engine::JobId, phase: cuzk_core::engine::status::PartitionPhase) -> usize {
    let st = engine.status();
    st.jobs.iter().filter(|j| j.id == id).flat_map(|j| &j.partitions).filter(|p| p.phase == phase).count()
}

/// Waits (polling the engine's status, up to two minutes) until a
/// partition of `id` is on the GPU with another already proved.
fn wait_proving(engine: &Engine, id: cuzk_core::engine::JobId) {
    use cuzk_core::engine::status::PartitionPhase::{Done, Proving};
    let t = std::time::Instant::now();
    while partitions_in(engine, id, Proving) == 0 || partitions_in(engine, id, Done) == 0 {
        assert!(t.elapsed() < Duration::from_secs(120), "{id}: no partition on the GPU after one proved within 2 min");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Timeline events `ev` of job `id`.
fn events_of(timeline: &str, ev: &str, id: cuzk_core::engine::JobId) -> usize {
    let id = id.to_string();
    events(timeline, ev).filter(|v| v["job"] == id.as_str()).count()
}

/// A job cancelled while one of its partitions computes on the GPU ends at
/// once, and no other partition of it goes to the GPU after the cancel
/// (beyond one a worker had already taken); a shutdown that cancels while a
/// partition computes joins every worker (issue 55 item 3, on the GPU).
#[test]
fn cancel_and_shutdown_stop_gpu_work_at_the_next_partition() {
    const TEST: &str = "cancel_and_shutdown_stop_gpu_work_at_the_next_partition";
    const PARTITIONS: usize = 24;
    let _device = vram::alone();
    if cuzk_sys::test_device(TEST).is_none() {
        return;
    }
    let seed = cuzk_sys::test_seed(TEST);
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.jsonl");
    let backend = Arc::new(GpuBackend::new().unwrap());
    let engine = Engine::start_with_backend(engine_config(1, 0, false, &timeline), backend).unwrap();
    let job = |i: u64| BuiltinJob::new("synthetic:2^16:2".parse().unwrap(), PARTITIONS, seed.wrapping_add(i));

    let cancelled = engine.submit(ProofRequest::builtin(job(0))).unwrap();
    wait_proving(&engine, cancelled);
    let before = std::fs::read_to_string(&timeline).unwrap_or_default();
    let started_before = events_of(&before, "gpu_start", cancelled);
    let r = engine.cancel(cancelled).unwrap();
    assert!(r.cancelled && r.was_running, "{r:?}");
    let outcome = engine.await_job(cancelled, Some(Duration::ZERO)).unwrap();
    assert!(matches!(outcome, JobOutcome::Cancelled { .. }), "not ended at once by the cancel: {outcome:?}");

    // The engine goes on: the next job completes, and its proofs verify.
    let next = job(1);
    let id = engine.submit(ProofRequest::builtin(BuiltinJob::new(next.spec, 2, next.seed))).unwrap();
    assert!(matches!(engine.await_job(id, Some(Duration::from_secs(300))).unwrap(), JobOutcome::Completed(_)));

    let last = engine.submit(ProofRequest::builtin(job(2))).unwrap();
    wait_proving(&engine, last);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            engine.shutdown(ShutdownMode::Cancel);
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(120)).expect("shutdown(Cancel) did not join within 2 min of a partition on the GPU");
    });
    assert!(matches!(engine.await_job(last, Some(Duration::ZERO)).unwrap(), JobOutcome::Cancelled { .. }));

    let text = std::fs::read_to_string(&timeline).unwrap();
    let (started, ended) = (events_of(&text, "gpu_start", cancelled), events_of(&text, "gpu_end", cancelled));
    println!(
        "cancel on the GPU: {started_before} of {PARTITIONS} partitions had started before the cancel, {started} in all ({ended} ended); after a shutdown(Cancel): {} of {PARTITIONS} started",
        events_of(&text, "gpu_start", last)
    );
    assert!(started <= started_before + 1, "{} partitions went to the GPU after the cancel", started - started_before);
    assert_eq!(started, ended, "a GPU call of the cancelled job never ended");
    assert!(events_of(&text, "gpu_start", last) < PARTITIONS, "the shutdown let every partition run");
}

/// An urgent partition (a WinningPoSt's stand-in: a 2^12-constraint
/// circuit, priority critical) sent while a large one (2^18) computes,
/// under a VRAM limit just under the large one's working set (it takes the
/// fallback, granted all that normal work may take) or eight times the
/// urgent reserve where that is more, with an urgent VRAM reserve of twice
/// the urgent working set: it computes on the GPU beside the large
/// partitions holding the compute lock (`path=urgent_beside`), two
/// computes on one device at once, and every proof of both jobs verifies.
#[test]
fn urgent_partition_computes_beside_a_large_one_on_the_gpu() {
    const TEST: &str = "urgent_partition_computes_beside_a_large_one_on_the_gpu";
    let _device = vram::alone();
    let Some(device) = cuzk_sys::test_device(TEST) else { return };
    let seed = cuzk_sys::test_seed(TEST);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1 << 20) as f64);
    let dir = tempfile::tempdir().unwrap();
    let large = BuiltinJob::new("synthetic:2^18:2".parse().unwrap(), 6, seed);
    let urgent = BuiltinJob::new("synthetic:2^12:2".parse().unwrap(), 1, seed.wrapping_add(1));
    let backend = Arc::new(GpuBackend::new().unwrap());
    // Each circuit's parameters written where the engine looks for them,
    // and its working set on this device with them.
    let need_of = |job: &BuiltinJob, i: u64| write_params_and_need(&backend, device, job, seed.wrapping_add(i), seed, dir.path());
    let (large_need, urgent_need) = (need_of(&large, 0), need_of(&urgent, 1));
    let reserve = 2 * urgent_need;
    // The reserve is capped at an eighth of the budget.
    let limit = (large_need - 1).max(8 * reserve);

    let timeline = dir.path().join("timeline.jsonl");
    let mut cfg = engine_config(1, limit, false, &timeline);
    cfg.srs.param_cache = dir.path().to_path_buf();
    cfg.gpus.urgent_vram_reserve = ByteSize(reserve);
    let engine = Engine::start_with_backend(cfg, backend).unwrap();
    engine.preload_srs(&urgent.circuit_id()).unwrap();
    let large_id = engine.submit(ProofRequest::builtin(large)).unwrap();
    let t = std::time::Instant::now();
    while partitions_in(&engine, large_id, cuzk_core::engine::status::PartitionPhase::Proving) == 0 {
        assert!(t.elapsed() < Duration::from_secs(120), "no large partition on the GPU within 2 min");
        std::thread::sleep(Duration::from_millis(2));
    }
    let urgent_id = engine.submit(ProofRequest::builtin(urgent).with_priority(cuzk_core::engine::Priority::Critical)).unwrap();
    for (job, id) in [(urgent, urgent_id), (large, large_id)] {
        let out = match engine.await_job(id, Some(Duration::from_secs(300))).unwrap() {
            JobOutcome::Completed(p) => p,
            other => panic!("{job:?}: {other:?}"),
        };
        let pvk = prepare_verifying_key(&engine.parameters(&job.circuit_id()).unwrap().vk);
        for (p, proof) in Proof::many_from_bytes(&out.proof).unwrap().iter().enumerate() {
            assert!(verify_proof(&pvk, proof, &job.public_inputs(p)).unwrap(), "{job:?} partition {p} does not verify");
        }
    }
    engine.shutdown(ShutdownMode::Drain);
    let text = std::fs::read_to_string(&timeline).unwrap();
    let interval = |id: cuzk_core::engine::JobId| {
        let id = id.to_string();
        let at = |ev| events(&text, ev).filter(|v| v["job"] == id.as_str()).map(|v| v["t_us"].as_u64().unwrap()).collect::<Vec<_>>();
        at("gpu_start").into_iter().zip(at("gpu_end")).collect::<Vec<_>>()
    };
    let urgent_path: Vec<_> =
        events(&text, "gpu_end").filter(|v| v["job"] == urgent_id.to_string().as_str()).map(|v| v["path"].clone()).collect();
    let [(start, end)] = interval(urgent_id)[..] else { panic!("one urgent partition: {text}") };
    let beside = interval(large_id).iter().any(|&(s, e)| s < end && start < e);
    println!(
        "urgent partition (needs {}) beside 2^18 partitions (need {}) under vram_limit={} urgent_vram_reserve={}: path {urgent_path:?}, {} ms on the GPU, overlapping a large partition's compute: {beside}",
        mib(urgent_need),
        mib(large_need),
        mib(limit),
        mib(reserve),
        (end - start) / 1000
    );
    assert_eq!(urgent_path, ["urgent_beside"], "{text}");
}
