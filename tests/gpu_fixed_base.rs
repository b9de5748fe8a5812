//! GPU fixed-base multiplication (cuzk-sys, native/fixed_base/) against the
//! CPU's (cuzk_core::arith::fixed_base): fresh random scalars plus 0, 1, 2
//! and r - 1, at table sizes that give different window widths, G1 and G2;
//! then whole setups on the GPU byte-identical to the CPU's, in memory and
//! streamed to files. Skipped, visibly, without a GPU.

use cuzk_core::arith::fixed_base::{Device, FixedBase};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{generate_parameters_from_pce, write_parameters, ToxicWaste};
use cuzk_core::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use ff::Field;
use group::Group;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::time::Instant;

fn scalars(rng: &mut ChaCha20Rng, n: usize) -> Vec<Fr> {
    let mut ks: Vec<Fr> = (0..n).map(|_| Fr::random(&mut *rng)).collect();
    ks.extend([Fr::ZERO, Fr::ONE, Fr::from(2u64), -Fr::ONE]);
    ks
}

#[test]
fn gpu_equals_cpu_on_random_and_edge_scalars() {
    let Some(d) = cuzk_sys::test_device("gpu_fixed_base") else { return };
    let seed = cuzk_sys::test_seed("gpu_fixed_base");
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let ks = scalars(&mut rng, 20_000);
    for n in [1, 300, 1 << 14, 1 << 20] {
        let t = FixedBase::<G1Affine>::new(G1Projective::random(&mut rng), n);
        assert!(t.mul_many_gpu(d, &ks).unwrap() == t.mul_many(&ks), "G1, table for {n}");
        let t = FixedBase::<G2Affine>::new(G2Projective::random(&mut rng), n);
        assert!(t.mul_many_gpu(d, &ks).unwrap() == t.mul_many(&ks), "G2, table for {n}");
    }
    // Throughput at a production table (c = 16), GPU against all CPU cores.
    let ks = scalars(&mut rng, 1 << 21);
    let t = FixedBase::<G1Affine>::new(G1Projective::generator(), 1 << 27);
    let rate = |f: &dyn Fn() -> Vec<G1Affine>| {
        let s = Instant::now();
        let n = f().len();
        n as f64 / s.elapsed().as_secs_f64()
    };
    let gpu = rate(&|| t.mul_many_gpu(d, &ks).unwrap());
    let cpu = rate(&|| t.mul_many(&ks[..1 << 18]));
    println!("G1 fixed-base: GPU {:.1} M points/s, CPU {:.2} M points/s", gpu / 1e6, cpu / 1e6);
    let t = FixedBase::<G2Affine>::new(G2Projective::generator(), 1 << 26);
    let s = Instant::now();
    t.mul_many_gpu(d, &ks).unwrap();
    let gpu = ks.len() as f64 / s.elapsed().as_secs_f64();
    let s = Instant::now();
    t.mul_many(&ks[..1 << 16]);
    let cpu = (1 << 16) as f64 / s.elapsed().as_secs_f64();
    println!("G2 fixed-base: GPU {:.1} M points/s, CPU {:.2} M points/s", gpu / 1e6, cpu / 1e6);
}

#[test]
fn whole_setups_on_the_gpu_equal_the_cpu_byte_for_byte() {
    let Some(d) = cuzk_sys::test_device("gpu_fixed_base") else { return };
    let dir = tempfile::tempdir().unwrap();
    for (seed, spec) in [(1, "synthetic:777:5"), (2, "synthetic:4096:3"), (3, "sha256:1"), (4, "mimc:100")] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let tw = ToxicWaste::from_seed(seed);
        let record = || cuzk_core::pce::record("test", spec.blank()).unwrap();
        let cpu = generate_parameters_from_pce(record(), &tw, None, Device::Cpu).unwrap();
        let gpu = generate_parameters_from_pce(record(), &tw, None, Device::Gpu(d)).unwrap();
        assert!(gpu == cpu, "{spec}: GPU parameters differ from the CPU's");
        let (params, vk) = (dir.path().join("p.params"), dir.path().join("p.vk"));
        write_parameters(record(), &tw, None, Device::Gpu(d), &params, &vk).unwrap();
        let mut bytes = Vec::new();
        cpu.write(&mut bytes).unwrap();
        assert!(std::fs::read(&params).unwrap() == bytes, "{spec}: streamed GPU .params differ");
        assert_eq!(std::fs::read(&vk).unwrap(), cpu.vk.to_bytes(), "{spec}: .vk");
    }
}

/// A whole setup at 2^CUZK_SETUP_LOG_N (synthetic, Filecoin-shaped), on
/// the GPU, streamed to a file in CUZK_SETUP_DIR (default: the temp dir):
/// prints each phase's time, the file size and the process's peak memory.
/// Without CUZK_SETUP_LOG_N (CI) it runs at 2^12.
#[test]
fn setup_at_size_on_the_gpu() {
    let Some(d) = cuzk_sys::test_device("gpu_fixed_base") else { return };
    let log_n: u32 = std::env::var("CUZK_SETUP_LOG_N").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    let dir = std::env::var_os("CUZK_SETUP_DIR").map_or_else(std::env::temp_dir, Into::into);
    let spec: CircuitSpec = format!("synthetic:{}:8", (1usize << log_n) - 64).parse().unwrap();
    let t = Instant::now();
    let pce = cuzk_core::pce::record("setup", spec.blank()).unwrap();
    let (rows, vars, nnz) = (pce.num_constraints(), pce.shape.num_inputs + pce.shape.num_aux, pce.a.nnz() + pce.b.nnz() + pce.c.nnz());
    let recorded = t.elapsed().as_secs_f64();
    let (params, vk) = (dir.join(format!("setup-2^{log_n}.params")), dir.join(format!("setup-2^{log_n}.vk")));
    let t = Instant::now();
    write_parameters(pce, &ToxicWaste::from_seed(1), None, Device::Gpu(d), &params, &vk).unwrap();
    let setup = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&params).unwrap().len();
    std::fs::remove_file(&params).unwrap();
    std::fs::remove_file(&vk).unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM: ?");
    println!(
        "setup 2^{log_n} on GPU {d}: {rows} rows, {vars} variables, {nnz} nonzeros; record {recorded:.1} s, \
         QAP + queries + file {setup:.1} s; .params {:.2} GiB; peak {peak}",
        size as f64 / (1u64 << 30) as f64
    );
}
