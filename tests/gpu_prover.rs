//! The GPU Groth16 prover (cuzk-core feature `cuda`) against the CPU
//! prover: byte-identical proofs for the same (params, witness, r, s), on
//! real circuits and a batch, and proofs that verify. Skipped, visibly,
//! without a GPU; without one the GPU prover must return an error.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{self, gpu_prover};
use cuzk_core::Fr;
use ff::Field;
use rand::SeedableRng;

#[test]
fn gpu_prover_matches_cpu_prover() {
    let Some(dev) = cuzk_sys::test_device("gpu_prover_matches_cpu_prover") else {
        assert!(gpu_prover::default_device().is_err(), "no device, yet the GPU prover found one");
        return;
    };
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    for (spec, batch) in [("sha256:1", 2), ("mimc:300", 1), ("synthetic:1000", 3), ("synthetic:70000:5", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
        let assignments: Vec<_> =
            (0..batch).map(|i| cuzk_core::cs::synthesize(spec.instance(seed + i)).unwrap()).collect();
        let randomness: Vec<(Fr, Fr)> = (0..batch).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
        let cpu = groth16::prove_synthesized_deterministic(&params, &assignments, &randomness).unwrap();
        let gpu = gpu_prover::prove_synthesized_deterministic_gpu(dev, &params, &assignments, &randomness).unwrap();
        assert_eq!(cpu.len(), gpu.len());
        for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
            assert_eq!(c.to_bytes(), g.to_bytes(), "{spec:?}: proof {i} differs between GPU and CPU");
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
    let Some(dev) = cuzk_sys::test_device("gpu_batch_msms_match_cpu_prover") else { return };
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let spec: CircuitSpec = "synthetic:70000:5".parse().unwrap();
    let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
    let batch = 3;
    let assignments: Vec<_> = (0..batch).map(|i| cuzk_core::cs::synthesize(spec.instance(seed + i)).unwrap()).collect();
    let randomness: Vec<(Fr, Fr)> = (0..batch).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
    let cpu = groth16::prove_synthesized_deterministic(&params, &assignments, &randomness).unwrap();
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
        let results = prover.msms(&params, SrsPoints::Host(&params), &assignments, None, opts).unwrap();
        assert_eq!(results.len(), batch as usize);
        for (i, (m, &(r, s))) in results.into_iter().zip(&randomness).enumerate() {
            let proof = groth16::assemble(&params.vk, m, r, s);
            assert_eq!(proof.to_bytes(), cpu[i].to_bytes(), "batch MSMs, {what}: proof {i} differs from the CPU prover");
        }
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
    let Some(dev) = cuzk_sys::test_device("gpu_overlapped_queries_match_cpu_prover") else { return };
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let prover = GpuProver::new(dev).unwrap();
    for (spec, batch) in [("synthetic:70000:5", 3), ("sha256:1", 2)] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
        let assignments: Vec<_> =
            (0..batch).map(|i| cuzk_core::cs::synthesize(spec.instance(seed + i)).unwrap()).collect();
        let randomness: Vec<(Fr, Fr)> = (0..batch).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
        let cpu = groth16::prove_synthesized_deterministic(&params, &assignments, &randomness).unwrap();
        let resident = DeviceSrs::upload(dev, &params).unwrap();
        for prestage_next in [false, true] {
            let opts = GpuOptions { overlap_queries: true, prestage_next, ..Default::default() };
            let first = Some(prover.stage_h(&assignments[0]).unwrap());
            let results = prover.msms(&params, SrsPoints::Device(&resident), &assignments, first, opts).unwrap();
            assert_eq!(results.len(), batch as usize);
            for (i, (m, &(r, s))) in results.into_iter().zip(&randomness).enumerate() {
                let proof = groth16::assemble(&params.vk, m, r, s);
                assert_eq!(
                    proof.to_bytes(),
                    cpu[i].to_bytes(),
                    "{spec:?}, overlapped queries (prestage_next {prestage_next}): proof {i} differs from the CPU prover"
                );
            }
        }
        println!("overlapped query MSMs {spec:?}: {batch} GPU proofs byte-identical to the CPU prover, with and without pre-staging");
    }
}
