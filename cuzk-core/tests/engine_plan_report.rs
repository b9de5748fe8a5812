//! The plan report in the engine's log: the start-up lines (host budget,
//! devices, pipeline) and, at a circuit's first plan, the budget's split,
//! the partitions in flight and each device's plan, once per circuit and
//! kind of reservation, with the numbers the engine holds.

mod common;

use common::*;
use cuzk_core::config::format_size;
use cuzk_core::engine::interlock::DeviceLocks;
use cuzk_core::engine::plan_report::{DevicePlan, GpuPlan, MatricesAt, SrsAt};
use cuzk_core::engine::srs_handle::SrsHandle;
use cuzk_core::engine::{
    CpuBackend, DeviceInfo, Engine, MatricesLease, PartitionedCircuit, ProofRequest, ProveInput, ProverBackend, ProverError, ShutdownMode,
};
use cuzk_core::groth16::Proof;
use cuzk_core::pce::Pce;
use rand_core::SeedableRng;
use std::sync::{Arc, Mutex, OnceLock};

/// Every log line of this test binary (each test picks its own by the
/// circuit or device it names).
struct Capture(Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Info
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            self.0.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

fn captured() -> &'static Capture {
    static CAPTURE: OnceLock<&'static Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let c: &'static Capture = Box::leak(Box::new(Capture(Mutex::default())));
        log::set_logger(c).expect("no other logger in this test binary");
        log::set_max_level(log::LevelFilter::Info);
        c
    })
}

fn lines_with(prefix: &str) -> Vec<String> {
    captured().0.lock().unwrap().iter().filter(|l| l.starts_with(prefix)).cloned().collect()
}

#[test]
fn the_cpu_backend_logs_its_budget_and_one_plan_per_circuit() {
    captured();
    let engine = Engine::start_with_backend(config(1, 1), Arc::new(CpuBackend)).unwrap();
    let host = lines_with("plan host memory_budget=1GiB ");
    assert!(
        host.contains(&"plan host memory_budget=1GiB source=memory.total_budget urgent_reserve=128MiB backend=cpu".to_string()),
        "{host:?}"
    );
    assert!(!lines_with("plan device cpu vram=none proves_on=cpu").is_empty());
    assert_eq!(
        lines_with("plan pipeline partition_workers=1 gpu_queue=1 prover_workers=1 max_batch_size=1 partitions_in_flight_max=3 ").len(),
        1
    );
    let job = builtin("synthetic:1024:4", 3, 1);
    let id = job.circuit_id();
    for seed in [1, 2] {
        let job = builtin("synthetic:1024:4", 3, seed);
        verify(&engine, &job, &expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1));
    }
    let mine = |what: &str| lines_with(&format!("plan {what} circuit_id={id} "));
    let srs_bytes = engine.status().srs[0].size_bytes;
    assert_eq!(
        mine("budget"),
        [
            format!(
                "plan budget circuit_id={id} item=srs bytes={0} points={0} note=\"host points, read by a device that streams them or proves on the CPU\"",
                format_size(srs_bytes)
            ),
            format!("plan budget circuit_id={id} item=pce bytes=0B"),
            mine("budget")[2].clone(),
            format!("plan budget circuit_id={id} item=urgent_reserve bytes=128MiB"),
            mine("budget")[4].clone(),
            format!("plan budget circuit_id={id} item=total bytes=1GiB"),
        ],
        "one split, for the first partition of the first job"
    );
    assert!(mine("budget")[2].contains(" count=3 ") && mine("budget")[2].ends_with(" reservation=whole"), "{:?}", mine("budget"));
    let partitions = mine("partitions");
    assert_eq!(partitions.len(), 1, "{partitions:?}");
    assert!(
        partitions[0].starts_with(&format!("plan partitions circuit_id={id} in_flight=3 limited_by=workers budget_allows=")),
        "{partitions:?}"
    );
    assert_eq!(mine("device cpu"), [format!("plan device cpu circuit_id={id} srs=host vram=none proves_on=cpu")]);
    engine.shutdown(ShutdownMode::Drain);
}

/// The CPU prover behind two devices that report a GPU's plan: the
/// matrices resident (so partitions are synthesized witness-only) and
/// the SRS streamed from the host, or resident where `srs_in_vram`.
struct TwoCards {
    srs_in_vram: bool,
}

impl ProverBackend for TwoCards {
    type Staged = ();
    type Computed = Vec<Proof>;
    fn name(&self) -> &str {
        "two-cards"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        // A name per kind: the log is captured for the whole binary, and
        // the test that counts the startup lines runs beside the others.
        let name = if self.srs_in_vram { "srs-card" } else { "card" };
        (0..2).map(|ordinal| DeviceInfo { ordinal, name: name.into(), vram_bytes: 16 << 30 }).collect()
    }
    fn vram_needed(&self, _: u32, _: &ProveInput<'_>) -> u64 {
        0
    }
    fn prestage(&self, _: u32, _: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }
    fn compute(&self, d: u32, _: (), input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        CpuBackend.compute(d, (), input)
    }
    fn compute_fallback(&self, d: u32, _: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.compute(d, (), input)
    }
    fn epilogue(&self, _: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        Ok(computed)
    }
    fn abc_on_device(&self, _: &Arc<Pce>, _: &SrsHandle, _: &[Arc<DeviceLocks>]) -> Option<MatricesLease> {
        Some(MatricesLease::holding(Vec::new()))
    }
    fn device_plans(&self, _: &SrsHandle, pce: Option<&Arc<Pce>>, witness_only: bool, devices: &[Arc<DeviceLocks>]) -> Vec<DevicePlan> {
        let matrices = match (pce, witness_only) {
            (Some(_), true) => MatricesAt::Vram { bytes: 1 << 30 },
            (Some(_), false) => MatricesAt::Host,
            (None, _) => MatricesAt::None,
        };
        let srs =
            if self.srs_in_vram { SrsAt::Vram { bytes: 2 << 30 } } else { SrsAt::Host { resident_needs: Some(61 << 30), a_vram: None } };
        let gpu = GpuPlan { srs, matrices, working_set: 5 << 30, h_term_on_device: true };
        devices.iter().map(|d| DevicePlan { ordinal: d.ordinal, vram_budget: d.vram.usage().total_bytes, gpu: Some(gpu) }).collect()
    }
}

/// With the PCE on, the circuit's first partition is reserved whole (its
/// PCE is recorded then) and the others witness-only: each plan once, with
/// every device's line.
#[test]
fn a_backend_s_device_plans_are_logged_once_per_device_and_reservation() {
    captured();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(1, 1);
    c.srs.param_cache = dir.path().to_path_buf();
    c.synthesis.pce = true;
    let engine = Engine::start_with_backend(c, Arc::new(TwoCards { srs_in_vram: false })).unwrap();
    assert_eq!(
        lines_with("plan device gpu=1 name=\"card\""),
        ["plan device gpu=1 name=\"card\" vram_budget=16GiB urgent_vram_reserve=1GiB"]
    );
    let job = builtin("synthetic:2048:4", 4, 3);
    let id = job.circuit_id();
    verify(&engine, &job, &expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1));
    let partitions = lines_with(&format!("plan budget circuit_id={id} item=partitions "));
    assert_eq!(partitions.len(), 2, "{partitions:?}");
    assert!(partitions[0].ends_with(" reservation=whole") && partitions[1].ends_with(" reservation=witness_only"), "{partitions:?}");
    let pce_bytes = engine.memory().pce_bytes;
    assert!(pce_bytes > 0);
    // None of it at the first plan: the PCE is recorded with that partition.
    let pce_lines = lines_with(&format!("plan budget circuit_id={id} item=pce "));
    assert_eq!(
        pce_lines,
        [
            format!("plan budget circuit_id={id} item=pce bytes=0B"),
            format!("plan budget circuit_id={id} item=pce bytes={}", format_size(pce_bytes))
        ]
    );
    for gpu in 0..2 {
        let devices = lines_with(&format!("plan device gpu={gpu} circuit_id={id} "));
        let tail = "working_set=5GiB vram_budget=16GiB working_sets_fit=3 partitions_in_flight=1 h_term=device";
        assert_eq!(devices, [
            format!("plan device gpu={gpu} circuit_id={id} srs=host srs_resident_needs_vram_budget=61GiB matrices=none {tail}"),
            format!("plan device gpu={gpu} circuit_id={id} srs=host srs_resident_needs_vram_budget=61GiB matrices=vram matrices_vram=1GiB working_set=5GiB vram_budget=16GiB working_sets_fit=3 partitions_in_flight=1 h_term=device"),
        ]);
    }
    engine.shutdown(ShutdownMode::Drain);
}

/// Where every card plans to keep the SRS in VRAM, the budget's SRS item
/// says its host points will be released (the rule the prover workers
/// release them by) where they can be read again from their `.params`
/// file, and kept where they were generated in memory.
#[test]
fn host_points_every_card_keeps_are_reported_released_where_they_have_a_file() {
    captured();
    for (spec, file) in [("synthetic:1024:8", true), ("synthetic:2048:2", false)] {
        let dir = tempfile::tempdir().unwrap();
        let job = builtin(spec, 2, 5);
        let id = job.circuit_id();
        if file {
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
            let params = cuzk_core::groth16::generate_random_parameters(job.spec.blank(), &mut rng).unwrap();
            params.write_file(&dir.path().join(format!("{id}.params"))).unwrap();
        }
        let mut c = config(1, 1);
        c.srs.param_cache = dir.path().to_path_buf();
        // One plan (whole partitions), not a second once a PCE is recorded.
        c.synthesis.pce = false;
        let engine = Engine::start_with_backend(c, Arc::new(TwoCards { srs_in_vram: true })).unwrap();
        verify(&engine, &job, &expect_completed(engine.prove(ProofRequest::builtin(job), WAIT).unwrap().1));
        let points = format_size(engine.status().srs[0].size_bytes);
        let expected = if file {
            format!("plan budget circuit_id={id} item=srs bytes=0B points={points} note=\"host points released once every device has its copy in VRAM, read again from their file where one needs them\"")
        } else {
            format!("plan budget circuit_id={id} item=srs bytes={points} points={points} note=\"host points kept beside the cards' copies: generated in memory, no file to read them again from\"")
        };
        assert_eq!(lines_with(&format!("plan budget circuit_id={id} item=srs ")), [expected], "file={file}");
        assert_eq!(
            lines_with(&format!("plan device gpu=1 circuit_id={id} ")),
            [format!("plan device gpu=1 circuit_id={id} srs=vram srs_vram=2GiB matrices=none working_set=5GiB vram_budget=16GiB working_sets_fit=2 partitions_in_flight=1 h_term=device")]
        );
        engine.shutdown(ShutdownMode::Drain);
    }
}
