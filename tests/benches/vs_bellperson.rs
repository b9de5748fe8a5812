//! CPU comparison with bellperson 0.27 on the same circuit and params:
//! `cargo bench -p cuzk-tests --bench vs_bellperson -- [LOG_SIZES...] [--setup]`
//! (default sizes 16 18 20). Proving: synthesis included on both sides,
//! same r and s, and the proof bytes are checked equal. With `--setup`,
//! also times both setups (bellperson's takes minutes at 2^20).

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar as Fr};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16;
use cuzk_tests::{bp_proof_bytes, to_bellperson};
use ff::Field;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let with_setup = args.iter().any(|a| a == "--setup");
    let logs: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let logs = if logs.is_empty() { vec![16, 18, 20] } else { logs };
    let runs = 3;
    println!("threads: {} (both provers use all of them)", cuzk_core::par::threads());
    println!("| circuit | step | cuzk s | bellperson s | speedup |");
    println!("|---|---|---|---|---|");
    let mut rng = rand::thread_rng();
    for log in logs {
        let spec = CircuitSpec::Synthetic { constraints: 1 << log, inputs: 8 };
        let t = Instant::now();
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
        let ours_setup = t.elapsed().as_secs_f64();
        if with_setup {
            let t = Instant::now();
            let _ = bp::generate_random_parameters::<Bls12, _, _>(spec.blank(), &mut rng).unwrap();
            let theirs = t.elapsed().as_secs_f64();
            println!("| {spec} | setup | {ours_setup:.2} | {theirs:.2} | {:.1}× |", theirs / ours_setup);
        }
        let bp_params = to_bellperson(&params);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for run in 0..runs {
            let c = spec.instance(run as u64);
            let (r, s) = (Fr::random(&mut rng), Fr::random(&mut rng));
            let t = Instant::now();
            let p = groth16::prove_deterministic(&params, c.clone(), r, s).unwrap();
            ours.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let q = bp::create_proof(c, &bp_params, r, s).unwrap();
            theirs.push(t.elapsed().as_secs_f64());
            assert_eq!(p.to_bytes().to_vec(), bp_proof_bytes(&q), "proofs differ");
        }
        let (o, t) = (median(ours), median(theirs));
        println!("| {spec} | prove (median of {runs}) | {o:.3} | {t:.3} | {:.2}× |", t / o);
    }
}
