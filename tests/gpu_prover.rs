//! The GPU Groth16 prover (cuzk-core feature `cuda`) against the CPU
//! prover: byte-identical proofs for the same (params, witness, r, s), on
//! real circuits and a batch, and proofs that verify. Skipped, visibly,
//! without a GPU; without one the GPU prover must return an error.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{self, gpu_prover};
use cuzk_core::Fr;
use ff::Field;
use rand::SeedableRng;

/// `batch` distinct circuits of `spec` with random parameters and (r, s),
/// and the CPU prover's proofs for them: what every GPU path must equal.
struct Case {
    params: cuzk_core::srs::Parameters,
    assignments: Vec<cuzk_core::cs::ProvingAssignment>,
    randomness: Vec<(Fr, Fr)>,
    cpu: Vec<groth16::Proof>,
}

fn case(spec: &CircuitSpec, batch: u64, seed: u64, rng: &mut rand_chacha::ChaCha20Rng) -> Case {
    let params = groth16::generate_random_parameters(spec.blank(), &mut *rng).unwrap();
    let assignments: Vec<_> = (0..batch).map(|i| cuzk_core::cs::synthesize(spec.instance(seed + i)).unwrap()).collect();
    let randomness: Vec<(Fr, Fr)> = (0..batch).map(|_| (Fr::random(&mut *rng), Fr::random(&mut *rng))).collect();
    let cpu = groth16::prove_synthesized_deterministic(&params, &assignments, &randomness).unwrap();
    Case { params, assignments, randomness, cpu }
}

impl Case {
    /// Each circuit's GPU MSM results, with its (r, s), give the CPU proof's bytes.
    fn assert_cpu_bytes(&self, results: Vec<groth16::MsmResults>, what: &str) {
        assert_eq!(results.len(), self.assignments.len());
        for (i, (m, &(r, s))) in results.into_iter().zip(&self.randomness).enumerate() {
            let proof = groth16::assemble(&self.params.vk, m, r, s);
            assert_eq!(proof.to_bytes(), self.cpu[i].to_bytes(), "{what}: proof {i} differs from the CPU prover");
        }
    }
}

/// The device and a fresh seeded rng for a GPU test (the seed printed, to
/// replay a failure); None, with the skip message, without a device.
fn gpu_and_rng(test: &str) -> Option<(i32, u64, rand_chacha::ChaCha20Rng)> {
    let dev = cuzk_sys::test_device(test)?;
    let seed = cuzk_sys::test_seed("gpu_prover");
    Some((dev, seed, rand_chacha::ChaCha20Rng::seed_from_u64(seed)))
}

#[test]
fn gpu_prover_matches_cpu_prover() {
    let Some((dev, seed, mut rng)) = gpu_and_rng("gpu_prover_matches_cpu_prover") else {
        assert!(gpu_prover::default_device().is_err(), "no device, yet the GPU prover found one");
        return;
    };
    for (spec, batch) in [("sha256:1", 2), ("mimc:300", 1), ("synthetic:1000", 3), ("synthetic:70000:5", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let c = case(&spec, batch, seed, &mut rng);
        let gpu = gpu_prover::prove_synthesized_deterministic_gpu(dev, &c.params, &c.assignments, &c.randomness).unwrap();
        assert_eq!(c.cpu.len(), gpu.len());
        for (i, (cpu, g)) in c.cpu.iter().zip(&gpu).enumerate() {
            assert_eq!(cpu.to_bytes(), g.to_bytes(), "{spec:?}: proof {i} differs between GPU and CPU");
        }
        println!("MSM prover {spec:?}: {batch} GPU proofs byte-identical to the CPU prover");
    }
}

/// Every plan the executor can be given (points resident or from host
/// memory, the H term on the device or the CPU, a, b, c uploaded or
/// computed by the SpMV on the device, each way of running the query MSMs,
/// with and without a second set of H buffers, MSMs whole or in small
/// chunks) gives the CPU prover's bytes, for distinct circuits of two
/// shapes. With the SpMV the assignments carry their witness only (no a,
/// b, c on the host at all); uploaded, both classic assignments and
/// witness-only ones (a, b, c then computed on the host by the executor).
/// The witness-only sources run the chunking and staging choices that
/// touch where a, b, c come from (gpu_spmv runs more sizes), to keep the
/// test's GPU time near its former ~160 plans.
/// Batch MSMs run both in one call and as calls of 2 sets with small
/// chunks (a batch of 3 takes calls of 2 and 1). The H term's third
/// buffer at these sizes is too small for any L plan (an MSM needs ~90 MB
/// at least; these domains give 4-8 MiB), so there L runs after the H MSM;
/// gpu_partition checks at 2^22 and 2^27 that it runs beside it.
#[test]
fn gpu_every_plan_matches_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{
        BatchSize, BatchedMsms, Chunks, GpuProver, HInputs, HTerm, Matrices, NextInputs, Plan, PointsAt, Queries, Scratch,
    };
    use cuzk_core::groth16::gpu_srs::{DeviceSrs, SrsPoints};
    use cuzk_core::pce::{self, gpu::GpuPce};
    use cuzk_sys::msm::MsmOptions;
    let Some((dev, seed, mut rng)) = gpu_and_rng("gpu_every_plan_matches_cpu_prover") else { return };
    let prover = GpuProver::new(dev).unwrap();
    let small = MsmOptions { max_chunk_points: 10_007, max_sort_entries: 30_000, ..Default::default() };
    let two_sets = BatchedMsms { g1_sets: 2, g1: small, g2_sets: 2, g2: small };
    let queries = [
        Queries::AfterH,
        Queries::BesideH,
        Queries::InHScratch(Scratch::LAndB),
        Queries::Batched(BatchSize::Within(u64::MAX)),
        Queries::Batched(BatchSize::Exactly(two_sets)),
    ];
    for (spec, batch) in [("synthetic:70000:5", 3), ("sha256:1", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let c = case(&spec, batch, seed, &mut rng);
        let pce = pce::record("c", spec.instance(seed)).unwrap();
        let witness_only: Vec<_> = (0..batch)
            .map(|i| pce.witness_assignment(cuzk_core::cs::generate_witness(spec.instance(seed + i)).unwrap()).unwrap())
            .collect();
        assert!(witness_only.iter().all(|pa| pa.abc_deferred() && pa.a.is_empty()));
        let gpu_pce = GpuPce::upload(&pce, dev).unwrap();
        let matrices = Some(Matrices { host: &pce, device: Some(&gpu_pce), streamed: None });
        let resident = DeviceSrs::upload(dev, &c.params).unwrap();
        let mut plans = 0;
        let sources = [
            (HInputs::Uploaded, &c.assignments, None),
            (HInputs::SpmvOnDevice, &witness_only, matrices),
            (HInputs::Uploaded, &witness_only, matrices),
        ];
        for (points_at, points) in [(PointsAt::Host, SrsPoints::Host(&c.params)), (PointsAt::Device, SrsPoints::Device(&resident))] {
            for h in [HTerm::Device, HTerm::Cpu] {
                for q in queries {
                    for next in [NextInputs::WhenDue, NextInputs::SecondHBuffers] {
                        for chunks in [Chunks::Whole, Chunks::Exactly(small)] {
                            for (inputs, assignments, pce) in sources {
                                let deferred = pce.is_some();
                                let spmv_only_choices = inputs == HInputs::SpmvOnDevice && (h == HTerm::Cpu || chunks != Chunks::Whole);
                                let uploaded_only_choices =
                                    inputs == HInputs::Uploaded && (chunks != Chunks::Whole || next != NextInputs::WhenDue);
                                if deferred && (spmv_only_choices || uploaded_only_choices) {
                                    continue;
                                }
                                let plan = Plan {
                                    circuits: assignments.len(),
                                    points: points_at,
                                    h,
                                    inputs,
                                    queries: q,
                                    next,
                                    chunks,
                                    z_in_grant: false,
                                };
                                let first = (h == HTerm::Device).then(|| prover.stage_h(&assignments[0], pce).unwrap());
                                let ran = prover.fit(&c.params, points, &assignments[0], pce, &plan).unwrap();
                                assert!(
                                    !matches!(ran.queries, Queries::InHScratch(_)),
                                    "{spec:?}, {plan}: L runs beside H in a buffer too small for it"
                                );
                                let spmv = h == HTerm::Device && inputs == HInputs::SpmvOnDevice;
                                assert_eq!(ran.inputs == HInputs::SpmvOnDevice, spmv, "{spec:?}, {plan} runs as {ran}");
                                let timed = prover.run(&c.params, points, assignments, pce, first, &plan).unwrap();
                                c.assert_cpu_bytes(
                                    timed.into_iter().map(|(m, _)| m).collect(),
                                    &format!("{spec:?}, {plan} (runs as {ran})"),
                                );
                                plans += 1;
                            }
                        }
                    }
                }
            }
        }
        // Witness-only assignments without their PCE are refused.
        let plan = Plan {
            circuits: batch as usize,
            points: PointsAt::Host,
            h: HTerm::Device,
            inputs: HInputs::Uploaded,
            queries: Queries::AfterH,
            next: NextInputs::WhenDue,
            chunks: Chunks::Whole,
            z_in_grant: false,
        };
        let err = prover
            .run(&c.params, SrsPoints::Host(&c.params), &witness_only, None, None, &plan)
            .expect_err("witness-only assignments without a PCE");
        assert!(err.to_string().contains("witness only"), "{err}");
        // So is another circuit's PCE.
        let other = pce::record("other", "synthetic:999".parse::<CircuitSpec>().unwrap().blank()).unwrap();
        let wrong = Some(Matrices { host: &other, device: None, streamed: None });
        let err = prover.run(&c.params, SrsPoints::Host(&c.params), &witness_only, wrong, None, &plan).expect_err("another circuit's PCE");
        assert!(err.to_string().contains("PCE of \"other\""), "{err}");
        // A plan whose points are elsewhere than the call's is refused.
        let wrong = Plan { points: PointsAt::Device, ..plan };
        let err = prover
            .run(&c.params, SrsPoints::Host(&c.params), &c.assignments, None, None, &wrong)
            .expect_err("a plan for resident points ran on host points");
        assert!(err.to_string().contains("plan"), "{err}");
        println!("every plan, {spec:?}: {plans} plans, {batch} GPU proofs each byte-identical to the CPU prover");
    }
}
