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
    let seed: u64 = rand::random();
    println!("seed {seed}");
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
        let gpu =
            gpu_prover::prove_synthesized_deterministic_gpu(dev, &c.params, &c.assignments, &c.randomness).unwrap();
        assert_eq!(c.cpu.len(), gpu.len());
        for (i, (cpu, g)) in c.cpu.iter().zip(&gpu).enumerate() {
            assert_eq!(cpu.to_bytes(), g.to_bytes(), "{spec:?}: proof {i} differs between GPU and CPU");
        }
        println!("MSM prover {spec:?}: {batch} GPU proofs byte-identical to the CPU prover");
    }
}

/// The batch path (SRS points from host memory; L, A, B_G1, B_G2 as batch
/// MSMs over the circuits, each SRS chunk uploaded once) gives the CPU
/// prover's bytes for distinct circuits: all sets in one call, two sets per
/// call with small chunks (a batch of 3 takes calls of 2 and 1), and with
/// the H term on the CPU.
#[test]
fn gpu_batch_msms_match_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{BatchedMsms, GpuOptions, GpuProver};
    use cuzk_core::groth16::gpu_srs::SrsPoints;
    use cuzk_sys::msm::MsmOptions;
    let Some((dev, seed, mut rng)) = gpu_and_rng("gpu_batch_msms_match_cpu_prover") else { return };
    let batch = 3;
    let c = case(&"synthetic:70000:5".parse().unwrap(), batch, seed, &mut rng);
    let params = &c.params;
    let prover = GpuProver::new(dev).unwrap();
    let (n1, n2) = (params.h.len().max(params.l.len()) as u64, params.b_g2.len() as u64);
    let small = MsmOptions { max_chunk_points: 10_007, max_sort_entries: 30_000, ..Default::default() };
    let plans = [
        ("one call", BatchedMsms::within(dev, n1, n2, 3, u64::MAX).unwrap(), false),
        ("2 sets per call, chunks of 10007", BatchedMsms { g1_sets: 2, g1: small, g2_sets: 2, g2: small }, false),
        ("H on the CPU", BatchedMsms { g1_sets: 3, g1: small, g2_sets: 1, g2: small }, true),
    ];
    for (what, plan, h_on_cpu) in plans {
        let opts = GpuOptions { batched: Some(plan), h_on_cpu, ..Default::default() };
        let results = prover.msms(params, SrsPoints::Host(params), &c.assignments, None, opts).unwrap();
        c.assert_cpu_bytes(results, &format!("batch MSMs, {what}"));
        println!("batch MSMs ({what}): {batch} GPU proofs byte-identical to the CPU prover");
    }
}

/// The SRS resident in VRAM with the query MSMs (L, A, B_G1, B_G2) on a
/// second thread overlapping the H MSM, alone and with the next circuit's
/// a, b, c pre-staged meanwhile: the CPU prover's bytes, for distinct
/// circuits of two shapes.
#[test]
fn gpu_overlapped_queries_match_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{GpuOptions, GpuProver};
    use cuzk_core::groth16::gpu_srs::{DeviceSrs, SrsPoints};
    let Some((dev, seed, mut rng)) = gpu_and_rng("gpu_overlapped_queries_match_cpu_prover") else { return };
    let prover = GpuProver::new(dev).unwrap();
    for (spec, batch) in [("synthetic:70000:5", 3), ("sha256:1", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let c = case(&spec, batch, seed, &mut rng);
        let resident = DeviceSrs::upload(dev, &c.params).unwrap();
        for prestage_next in [false, true] {
            let opts = GpuOptions { overlap_queries: true, prestage_next, ..Default::default() };
            let first = Some(prover.stage_h(&c.assignments[0]).unwrap());
            let results = prover.msms(&c.params, SrsPoints::Device(&resident), &c.assignments, first, opts).unwrap();
            c.assert_cpu_bytes(results, &format!("{spec:?}, overlapped queries (prestage_next {prestage_next})"));
        }
        println!("overlapped query MSMs {spec:?}: {batch} GPU proofs byte-identical to the CPU prover, with and without pre-staging");
    }
}

/// `GpuOptions::l_beside_h` on circuits whose H term's third buffer is
/// too small for any L plan (an MSM needs ~90 MB at least; these domains
/// give 4-8 MiB): L runs after the H MSM, as without the option, with the
/// CPU prover's bytes; with the SRS resident the option is ignored. The
/// path where L does run beside H is checked at 2^22 and 2^27 by
/// gpu_partition, which asserts it ran.
#[test]
fn gpu_l_beside_h_falls_back_and_matches_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{GpuOptions, GpuProver};
    use cuzk_core::groth16::gpu_srs::{DeviceSrs, SrsPoints};
    let Some((dev, seed, mut rng)) = gpu_and_rng("gpu_l_beside_h_falls_back_and_matches_cpu_prover") else { return };
    let prover = GpuProver::new(dev).unwrap();
    for (spec, batch) in [("synthetic:70000:5", 2), ("sha256:1", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let c = case(&spec, batch, seed, &mut rng);
        let resident = DeviceSrs::upload(dev, &c.params).unwrap();
        for (srs, points) in [("host", SrsPoints::Host(&c.params)), ("resident", SrsPoints::Device(&resident))] {
            for prestage_next in [false, true] {
                let opts = GpuOptions { l_beside_h: true, prestage_next, ..Default::default() };
                let first = Some(prover.stage_h(&c.assignments[0]).unwrap());
                let timed = prover.msms_timed(&c.params, points, &c.assignments, first, opts).unwrap();
                assert!(timed.iter().all(|(_, t)| !t.l_beside_h), "{spec:?}, SRS {srs}: L ran beside H in a buffer too small for it");
                let results = timed.into_iter().map(|(m, _)| m).collect();
                c.assert_cpu_bytes(results, &format!("{spec:?}, SRS {srs}, L beside H asked for (prestage_next {prestage_next})"));
            }
        }
        println!("L beside H asked for, {spec:?}: L after H (buffer too small), {batch} proofs byte-identical to the CPU prover, SRS from host and resident");
    }
}
