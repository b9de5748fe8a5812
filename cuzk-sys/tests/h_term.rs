//! The H term on the GPU against bellperson 0.27's execute_fft on the CPU:
//! random a, b, c of lengths that are and are not powers of two, from
//! pageable and pinned host memory.

mod common;

use blstrs::Scalar;
use cuzk_sys::{FrRepr, HTermBuffers, NttContext, PinnedBuffer, Stream};
use rand::Rng;

fn gpu_h(ctx: &NttContext, a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Vec<Scalar> {
    let log_n = a.len().next_power_of_two().trailing_zeros();
    let mut bufs = HTermBuffers::new(ctx.device(), log_n).unwrap();
    ctx.h_term(common::as_repr(a), common::as_repr(b), common::as_repr(c), log_n, &mut bufs).unwrap();
    common::from_repr(&bufs.h_to_host(&Stream::new(ctx.device()).unwrap()).unwrap())
}

#[test]
fn h_term_matches_bellperson() {
    let Some(dev) = cuzk_sys::test_device("h_term_matches_bellperson") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let mut rng = common::rng();
    let mut sizes: Vec<usize> = (1..=16).map(|l| 1usize << l).collect();
    for l in [5u32, 11, 17, 19, 21] {
        sizes.push((1usize << (l - 1)) + rng.gen_range(1..(1usize << (l - 1))));
    }
    sizes.push(1 << 20);
    for n in sizes {
        let a = common::random_scalars(&mut rng, n);
        let b = common::random_scalars(&mut rng, n);
        let c = common::random_scalars(&mut rng, n);
        let got = gpu_h(&ctx, &a, &b, &c);
        let want = common::cpu_h(&a, &b, &c);
        if let Some(i) = common::first_mismatch(&got, &want) {
            panic!("H with n = {n}: GPU differs from bellperson at coefficient {i}");
        }
    }
    println!("H term equals bellperson's execute_fft for n = 2..2^16, 5 odd sizes up to 2^21, 2^20");
}

#[test]
fn h_term_from_pinned_memory() {
    let Some(dev) = cuzk_sys::test_device("h_term_from_pinned_memory") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let mut rng = common::rng();
    let n = (1 << 18) - 12345;
    let mut pinned: Vec<PinnedBuffer<FrRepr>> = Vec::new();
    let mut host = Vec::new();
    for _ in 0..3 {
        let x = common::random_scalars(&mut rng, n);
        let mut p = unsafe { PinnedBuffer::<FrRepr>::zeroed(n) }.unwrap();
        p.copy_from_slice(common::as_repr(&x));
        pinned.push(p);
        host.push(x);
    }
    let mut bufs = HTermBuffers::new(dev, 18).unwrap();
    ctx.h_term(&pinned[0], &pinned[1], &pinned[2], 18, &mut bufs).unwrap();
    let got = common::from_repr(&bufs.h_to_host(&Stream::new(dev).unwrap()).unwrap());
    assert!(got == common::cpu_h(&host[0], &host[1], &host[2]), "H from pinned memory differs");
}

#[test]
fn h_term_staged_then_computed() {
    let Some(dev) = cuzk_sys::test_device("h_term_staged_then_computed") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let mut rng = common::rng();
    let (upload, compute) = (Stream::new(dev).unwrap(), Stream::new(dev).unwrap());
    for (n, log_n) in [(3usize, 2u32), (1000, 10), ((1 << 19) - 7, 19)] {
        let x: Vec<Vec<Scalar>> = (0..3).map(|_| common::random_scalars(&mut rng, n)).collect();
        let mut bufs = HTermBuffers::new(dev, log_n).unwrap();
        let r = |i: usize| common::as_repr(&x[i]);
        ctx.h_stage(&upload, r(0), r(1), r(2), log_n, &mut bufs).unwrap();
        ctx.h_compute(&compute, log_n, &mut bufs).unwrap();
        compute.synchronize().unwrap();
        let got = common::from_repr(&bufs.h_to_host(&compute).unwrap());
        assert!(got == common::cpu_h(&x[0], &x[1], &x[2]), "staged H with n = {n} differs from bellperson");
    }
    println!("H term staged (upload stream) then computed (compute stream) equals bellperson");
}
