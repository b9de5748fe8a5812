//! The GPU NTT and H term (cuzk-sys) against the CPU prover's
//! (cuzk_core::ntt::Domain, cuzk_core::groth16::h_term::h_coefficients):
//! every NTT kind on fresh random data at sizes 2^1..2^22, and H for real
//! synthesized circuits (SHA-256, MiMC, partition-shaped synthetic), odd
//! sizes included. Skipped, visibly, without a GPU.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::h_term::h_coefficients;
use cuzk_core::ntt::Domain;
use cuzk_core::Fr;
use cuzk_sys::{DeviceBuffer, FrRepr, HTermBuffers, NttContext, NttKind, Stream};
use ff::Field;

/// blstrs::Scalar is #[repr(transparent)] over blst_fr: 4 u64 limbs in
/// Montgomery form, the device representation.
fn as_repr(s: &[Fr]) -> &[FrRepr] {
    assert_eq!(std::mem::size_of::<Fr>(), std::mem::size_of::<FrRepr>());
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const FrRepr, s.len()) }
}

fn from_repr(v: &[FrRepr]) -> Vec<Fr> {
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const Fr, v.len()) }.to_vec()
}

fn check(ctx: &NttContext, spec: &str, seed: u64) {
    let spec: CircuitSpec = spec.parse().unwrap();
    let pa = cuzk_core::cs::synthesize(spec.instance(seed)).unwrap();
    let n = pa.a.len();
    let log_n = n.next_power_of_two().trailing_zeros().max(1);
    let dev = ctx.device();
    let mut bufs = HTermBuffers::new(dev, log_n).unwrap();
    ctx.h_term(as_repr(&pa.a), as_repr(&pa.b), as_repr(&pa.c), log_n, &mut bufs).unwrap();
    let stream = Stream::new(dev).unwrap();
    let gpu = from_repr(&bufs.h_to_host(&stream).unwrap());
    // The coefficient of x^(N-1) is zero for a satisfied circuit.
    let mut top = [[0u64; 4]; 1];
    bufs.a.copy_to_host(&stream, (1 << log_n) - 1, &mut top).unwrap();
    assert!(from_repr(&top)[0] == Fr::ZERO, "{spec:?}: top coefficient of h is not zero");

    let cpu = h_coefficients(&pa.a, &pa.b, &pa.c).unwrap();
    assert_eq!(gpu.len(), cpu.len(), "{spec:?}: length");
    if let Some(i) = gpu.iter().zip(&cpu).position(|(g, c)| g != c) {
        panic!("{spec:?} (n = {n}): GPU h differs from the CPU prover at coefficient {i}");
    }
    println!("H term, {spec:?}: {n} constraints, domain 2^{log_n}: GPU equals the CPU prover");
}

#[test]
fn gpu_h_term_matches_cpu_prover_on_real_circuits() {
    let Some(dev) = cuzk_sys::test_device("gpu_h_term_matches_cpu_prover_on_real_circuits") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let seed = cuzk_sys::test_seed("gpu_h_term_matches_cpu_prover_on_real_circuits");
    for spec in ["sha256:1", "sha256:3", "mimc:300", "mimc:5000", "synthetic:1000", "synthetic:70000:5", "synthetic:2^20"] {
        check(&ctx, spec, seed);
    }
}

#[test]
fn gpu_h_term_matches_cpu_prover_at_2_pow_22() {
    let Some(dev) = cuzk_sys::test_device("gpu_h_term_matches_cpu_prover_at_2_pow_22") else { return };
    let ctx = NttContext::new(dev).unwrap();
    // 2 KiB PoRep partition size: 2,687,961 constraints, domain 2^22.
    check(&ctx, "synthetic:2687961:40", cuzk_sys::test_seed("gpu_h_term_matches_cpu_prover_at_2_pow_22"));
}

#[test]
fn gpu_ntt_matches_cpu_domain() {
    let Some(dev) = cuzk_sys::test_device("gpu_ntt_matches_cpu_domain") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(cuzk_sys::test_seed("gpu_ntt_matches_cpu_domain"));
    for log_n in (1..=16).chain([17, 19, 21, 22]) {
        let domain = Domain::new(log_n);
        for kind in [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse] {
            let data: Vec<Fr> = (0..1usize << log_n).map(|_| Fr::random(&mut rng)).collect();
            let mut cpu = data.clone();
            match kind {
                NttKind::Forward => domain.fft(&mut cpu),
                NttKind::Inverse => domain.ifft(&mut cpu),
                NttKind::CosetForward => domain.coset_fft(&mut cpu),
                NttKind::CosetInverse => domain.icoset_fft(&mut cpu),
            }
            let mut buf = DeviceBuffer::<FrRepr>::new(dev, data.len()).unwrap();
            buf.copy_from_host(&stream, 0, as_repr(&data)).unwrap();
            ctx.ntt(&stream, &mut buf, log_n, kind).unwrap();
            let mut out = vec![[0u64; 4]; data.len()];
            buf.copy_to_host(&stream, 0, &mut out).unwrap();
            assert!(from_repr(&out) == cpu, "2^{log_n} {kind:?}: GPU differs from cuzk_core::ntt::Domain");
        }
    }
    println!("NTT: all kinds equal cuzk_core::ntt::Domain for 2^1..2^17, 2^19, 2^21, 2^22");
}
