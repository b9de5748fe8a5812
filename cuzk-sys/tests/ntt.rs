//! GPU NTT (forward, inverse, coset forward and inverse) against the CPU
//! (bellperson 0.27's EvaluationDomain) on fresh random inputs, with round
//! trips; several streams at once; sparse checks at the largest sizes.

mod common;

use blstrs::Scalar;
use cuzk_sys::{DeviceBuffer, FrRepr, NttContext, NttKind, Stream};
use ff::{Field, PrimeField};
use rand::Rng;

const KINDS: [NttKind; 4] = [NttKind::Forward, NttKind::Inverse, NttKind::CosetForward, NttKind::CosetInverse];

fn gpu_ntt(ctx: &NttContext, stream: &Stream, data: &[Scalar], kind: NttKind) -> Vec<Scalar> {
    let log_n = data.len().trailing_zeros();
    let mut buf = DeviceBuffer::<FrRepr>::new(ctx.device(), data.len()).unwrap();
    buf.copy_from_host(stream, 0, common::as_repr(data)).unwrap();
    ctx.ntt(stream, &mut buf, log_n, kind).unwrap();
    let mut out = vec![[0u64; 4]; data.len()];
    buf.copy_to_host(stream, 0, &mut out).unwrap();
    common::from_repr(&out)
}

fn check_against_cpu(ctx: &NttContext, stream: &Stream, log_n: u32, kinds: &[NttKind]) {
    let mut rng = common::rng();
    for &kind in kinds {
        let data = common::random_scalars(&mut rng, 1 << log_n);
        let got = gpu_ntt(ctx, stream, &data, kind);
        let want = common::cpu_ntt(&data, kind);
        if let Some(i) = common::first_mismatch(&got, &want) {
            panic!("2^{log_n} {kind:?}: GPU differs from CPU at index {i}");
        }
    }
}

#[test]
fn ntt_matches_cpu_for_every_kind_up_to_2_pow_18() {
    let Some(dev) = cuzk_sys::test_device("ntt_matches_cpu_for_every_kind_up_to_2_pow_18") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    for log_n in 1..=18 {
        check_against_cpu(&ctx, &stream, log_n, &KINDS);
    }
    println!("NTT: all 4 kinds equal the CPU for 2^1..2^18");
}

#[test]
fn ntt_matches_cpu_at_large_sizes_with_round_trips() {
    let Some(dev) = cuzk_sys::test_device("ntt_matches_cpu_at_large_sizes_with_round_trips") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut rng = common::rng();
    for log_n in [19, 20, 21, 22, 23, 24] {
        check_against_cpu(&ctx, &stream, log_n, &[NttKind::Forward, NttKind::CosetInverse]);
        let data = common::random_scalars(&mut rng, 1 << log_n);
        let mut buf = DeviceBuffer::<FrRepr>::new(dev, data.len()).unwrap();
        buf.copy_from_host(&stream, 0, common::as_repr(&data)).unwrap();
        for (there, back) in [(NttKind::Forward, NttKind::Inverse), (NttKind::CosetForward, NttKind::CosetInverse)] {
            ctx.ntt(&stream, &mut buf, log_n, there).unwrap();
            ctx.ntt(&stream, &mut buf, log_n, back).unwrap();
        }
        let mut out = vec![[0u64; 4]; data.len()];
        buf.copy_to_host(&stream, 0, &mut out).unwrap();
        assert!(common::from_repr(&out) == data, "2^{log_n}: round trips changed the data");
        println!("NTT 2^{log_n}: forward and coset inverse equal the CPU; round trips exact");
    }
}

#[test]
fn ntt_on_several_streams_at_once() {
    let Some(dev) = cuzk_sys::test_device("ntt_on_several_streams_at_once") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let mut rng = common::rng();
    let log_n = 17;
    let inputs: Vec<Vec<Scalar>> = (0..4).map(|_| common::random_scalars(&mut rng, 1 << log_n)).collect();
    let streams: Vec<Stream> = (0..4).map(|_| Stream::new(dev).unwrap()).collect();
    let mut bufs: Vec<DeviceBuffer<FrRepr>> = Vec::new();
    for (s, x) in streams.iter().zip(&inputs) {
        let mut b = DeviceBuffer::new(dev, x.len()).unwrap();
        b.copy_from_host(s, 0, common::as_repr(x)).unwrap();
        bufs.push(b);
    }
    for (i, (s, b)) in streams.iter().zip(bufs.iter_mut()).enumerate() {
        ctx.ntt(s, b, log_n, KINDS[i]).unwrap(); // all enqueued before any waits
    }
    for (i, ((s, b), x)) in streams.iter().zip(&bufs).zip(&inputs).enumerate() {
        let mut out = vec![[0u64; 4]; x.len()];
        b.copy_to_host(s, 0, &mut out).unwrap();
        assert!(common::from_repr(&out) == common::cpu_ntt(x, KINDS[i]), "stream {i} differs");
    }
}

/// sum_j x_j w^(jk) over the nonzero entries only.
fn sparse_dft(entries: &[(usize, Scalar)], omega: Scalar, k: usize) -> Scalar {
    entries.iter().map(|&(j, v)| v * omega.pow_vartime([(j as u64) * (k as u64)])).sum()
}

/// Sizes too large for a CPU oracle in a test: sparse random inputs, 64
/// random outputs checked against a direct evaluation, and a round trip.
#[test]
fn ntt_large_sizes_sparse_check() {
    let Some(dev) = cuzk_sys::test_device("ntt_large_sizes_sparse_check") else { return };
    let info = cuzk_sys::DeviceInfo::query(dev).unwrap();
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut rng = common::rng();
    for log_n in [25u32, 26, 27, 28] {
        let n = 1usize << log_n;
        if (2 * 32 * n) as u64 > info.free_mem_bytes / 2 {
            cuzk_sys::test_skip_on_this_device(&format!("NTT 2^{log_n} sparse check (needs more device memory)"));
            continue;
        }
        let entries: Vec<(usize, Scalar)> = (0..200).map(|_| (rng.gen_range(0..n), Scalar::random(&mut rng))).collect();
        let mut data = vec![Scalar::ZERO; n];
        for &(j, v) in &entries {
            data[j] += v;
        }
        let mut merged: Vec<(usize, Scalar)> =
            data.iter().enumerate().filter(|(_, v)| !bool::from(v.is_zero())).map(|(j, v)| (j, *v)).collect();
        merged.sort_by_key(|e| e.0);
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let mut buf = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
        buf.copy_from_host(&stream, 0, common::as_repr(&data)).unwrap();
        ctx.ntt(&stream, &mut buf, log_n, NttKind::Forward).unwrap();
        for _ in 0..64 {
            let k = rng.gen_range(0..n);
            let mut got = [[0u64; 4]; 1];
            buf.copy_to_host(&stream, k, &mut got).unwrap();
            assert!(common::from_repr(&got)[0] == sparse_dft(&merged, omega, k), "2^{log_n} forward differs at {k}");
        }
        ctx.ntt(&stream, &mut buf, log_n, NttKind::Inverse).unwrap();
        let mut out = vec![[0u64; 4]; n];
        buf.copy_to_host(&stream, 0, &mut out).unwrap();
        assert!(common::from_repr(&out) == data, "2^{log_n}: forward then inverse changed the data");
        println!("NTT 2^{log_n}: 64 sparse outputs equal direct evaluation; round trip exact");
    }
}

#[test]
fn ntt_rejects_unsupported_sizes() {
    let Some(dev) = cuzk_sys::test_device("ntt_rejects_unsupported_sizes") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut buf = DeviceBuffer::<FrRepr>::new(dev, 4).unwrap();
    let err = ctx.ntt(&stream, &mut buf, 0, NttKind::Forward).unwrap_err();
    assert_eq!(err.code, cuzk_sys::ErrorCode::InvalidArgument, "{err}");
    let err = ctx.ntt(&stream, &mut buf, 3, NttKind::Forward).unwrap_err();
    assert_eq!(err.code, cuzk_sys::ErrorCode::InvalidArgument, "{err}");
}
