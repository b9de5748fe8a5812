//! Fp multiplication throughput on the GPU (plain binary): the integer
//! multiplication (native/ff/mont.cuh, what the MSM uses) against the
//! FP64-pipe one (native/ff/mont_f64.cuh, an experiment), alone and side by
//! side in the same threads, to measure whether the FP64 pipe adds
//! multiplication throughput (docs/CUDA.md, "the FP64 lever"). Every thread
//! runs 1 or 2 chains of each kind, `iters` dependent multiplications
//! long; time is one kernel's device events, median of several runs. The
//! chains' ends are checked between the two multiplications. `--quick`:
//! fewer runs.

use cuzk_sys::field_test::{fp_mul_chains, Chains};
use cuzk_sys::DeviceInfo;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let Some(dev) = cuzk_sys::test_device("gpu_field bench") else { return };
    let info = DeviceInfo::query(dev).unwrap();
    println!("device: {} ({} SMs)", info.name, info.sm_count);
    let runs = if quick { 3 } else { 7 };
    let iters = 1000u32;
    // Pseudo-random values below 2^380 (< p) as raw Montgomery words.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut rows = Vec::new();
    for (threads, bounded) in [(128u32, false), (128, true), (256, false)] {
        // Enough threads for every SM at its register-bound occupancy.
        let n = info.sm_count as usize * 2048;
        let mut a = vec![0u64; 6 * n];
        let mut b = vec![0u64; 6 * n];
        for (i, w) in a.iter_mut().chain(b.iter_mut()).enumerate() {
            *w = if i % 6 == 5 { next() >> 4 } else { next() };
        }
        let mut ends: Vec<(u32, u32, Vec<[u64; 6]>)> = Vec::new();
        for (ni, nf) in [(1u32, 0u32), (2, 0), (0, 1), (0, 2), (1, 1), (2, 2)] {
            let mut times = Vec::new();
            let mut out = Vec::new();
            for _ in 0..runs + 1 {
                let run = Chains { int_chains: ni, f64_chains: nf, iters, threads_per_block: threads, bounded };
                let (o, ms) = fp_mul_chains(dev, run, &a, &b).unwrap();
                times.push(ms);
                out = o;
            }
            times.remove(0); // warm-up
            times.sort_by(|x, y| x.partial_cmp(y).unwrap());
            let ms = times[times.len() / 2] as f64;
            let mults = n as f64 * iters as f64 * (ni + nf) as f64;
            rows.push((threads, bounded, ni, nf, ms, mults / ms / 1e6));
            ends.push((ni, nf, out));
        }
        // Chain c starts at a[(i + c) mod n] whichever kind runs it: the
        // (2, 0) and (0, 2) runs' ends must agree, and so must (1, 1)'s.
        let find = |ni, nf| &ends.iter().find(|e| e.0 == ni && e.1 == nf).unwrap().2;
        assert!(find(2, 0) == find(0, 2), "integer and FP64 chains end differently");
        assert!(find(1, 1)[..] == find(2, 0)[..], "side-by-side chains end differently");
        println!("{threads} threads per block (bounded {bounded}): integer and FP64 chains end equal");
    }
    println!();
    println!("| what | median ms | Gmul/s | vs best integer-only |");
    println!("| --- | --- | --- | --- |");
    let best_int = rows.iter().filter(|r| r.3 == 0).map(|r| r.5).fold(0f64, f64::max);
    for &(t, bounded, ni, nf, ms, gmul) in &rows {
        let bound = if bounded { " (<= 128 registers)" } else { "" };
        println!("| {t} threads/block{bound}, {ni} integer + {nf} FP64 chains | {ms:.2} | {gmul:.1} | {:.2}x |", gmul / best_int);
    }
}
