//! Device field arithmetic (Fr, Fp, Fp2) against blst/blstrs on millions of
//! random inputs, computed on the GPU by a test kernel.

mod common;

use blst::*;
use blstrs::Scalar;
use cuzk_sys::field_test::{field_op, Field, Op};
use ff::Field as _;
use rand::RngCore;

const OPS: [Op; 5] = [Op::CUZK_TEST_ADD, Op::CUZK_TEST_SUB, Op::CUZK_TEST_MUL, Op::CUZK_TEST_SQR, Op::CUZK_TEST_NEG];

fn limbs_of(s: &[Scalar]) -> Vec<u64> {
    common::as_repr(s).iter().flatten().copied().collect()
}

#[test]
fn fr_ops_match_blstrs() {
    let Some(dev) = cuzk_sys::test_device("fr_ops_match_blstrs") else { return };
    let mut rng = common::rng();
    let n = 1 << 22;
    let mut a = common::random_scalars(&mut rng, n);
    let b = common::random_scalars(&mut rng, n);
    // Edge cases first: 0, 1, -1 against everything.
    a[0] = Scalar::ZERO;
    a[1] = Scalar::ONE;
    a[2] = -Scalar::ONE;
    let (la, lb) = (limbs_of(&a), limbs_of(&b));
    let mut out = vec![0u64; la.len()];
    for op in OPS {
        field_op(dev, Field::CUZK_TEST_FR, op, &la, &lb, &mut out).unwrap();
        let got: Vec<Scalar> = common::from_repr(bytemuck_chunks(&out));
        for i in 0..n {
            let want = match op {
                Op::CUZK_TEST_ADD => a[i] + b[i],
                Op::CUZK_TEST_SUB => a[i] - b[i],
                Op::CUZK_TEST_MUL => a[i] * b[i],
                Op::CUZK_TEST_SQR => a[i].square(),
                _ => -a[i],
            };
            assert!(got[i] == want, "Fr {op:?} differs at {i}");
        }
        println!("Fr {op:?}: {n} results equal blstrs");
    }
    let m = 1 << 14;
    field_op(dev, Field::CUZK_TEST_FR, Op::CUZK_TEST_INV, &la[..4 * m], &lb[..4 * m], &mut out[..4 * m]).unwrap();
    let got = common::from_repr(bytemuck_chunks(&out[..4 * m]));
    for i in 0..m {
        assert!(got[i] == a[i].invert().unwrap_or(Scalar::ZERO), "Fr inverse differs at {i}");
    }
    println!("Fr inverse: {m} results equal blstrs");
}

fn bytemuck_chunks(v: &[u64]) -> &[[u64; 4]] {
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const [u64; 4], v.len() / 4) }
}

fn random_fp(rng: &mut impl RngCore) -> blst_fp {
    let mut x = [0u64; 6];
    for l in &mut x {
        *l = rng.next_u64();
    }
    x[5] &= 0x0fff_ffff_ffff_ffff; // < 2^380 < p
    let mut r = blst_fp::default();
    unsafe { blst_fp_from_uint64(&mut r, x.as_ptr()) };
    r
}

fn fp_edge_cases() -> [blst_fp; 3] {
    let zero = blst_fp::default();
    let mut one = blst_fp::default();
    let mut minus_one = blst_fp::default();
    unsafe {
        blst_fp_from_uint64(&mut one, [1u64, 0, 0, 0, 0, 0].as_ptr());
        blst_fp_cneg(&mut minus_one, &one, true);
    }
    [zero, one, minus_one]
}

/// BLS12-381's base field modulus p, little-endian 64-bit words.
const FP_MODULUS: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

/// The dedicated Fp squaring's exact instruction sequence, emulated on the
/// host with an explicit carry flag, against blst: checks every carry of
/// the algorithm without a GPU (the device runs the same sequence in PTX).
#[test]
fn fp_sqr_sequence_matches_blst_on_the_host() {
    if !cuzk_sys::AVAILABLE {
        cuzk_sys::test_skip("fp_sqr_sequence_matches_blst_on_the_host needs the CUDA build (nvcc)");
        return;
    }
    let mut rng = common::rng();
    let n = 1 << 20;
    let mut a: Vec<blst_fp> = (0..n).map(|_| random_fp(&mut rng)).collect();
    a[..3].copy_from_slice(&fp_edge_cases());
    // The largest values: p - 1 - k as raw Montgomery words.
    for k in 0..8u64 {
        let mut raw = FP_MODULUS;
        raw[0] -= 1 + k;
        a[3 + k as usize] = blst_fp { l: raw };
    }
    let la: Vec<u64> = a.iter().flat_map(|x| x.l).collect();
    let mut out = vec![0u64; la.len()];
    cuzk_sys::field_test::fp_sqr_emulated(&la, &mut out).unwrap();
    for i in 0..n {
        let mut want = blst_fp::default();
        unsafe { blst_fp_sqr(&mut want, &a[i]) };
        assert_eq!(&out[6 * i..6 * i + 6], &want.l[..], "emulated Fp squaring differs at {i}");
    }
    println!("Fp squaring sequence (host emulation): {n} results equal blst");
}

#[test]
fn fr_from_mont_sequence_matches_blst_on_the_host() {
    if !cuzk_sys::AVAILABLE {
        cuzk_sys::test_skip("fr_from_mont_sequence_matches_blst_on_the_host needs the CUDA build (nvcc)");
        return;
    }
    const FR_MODULUS: [u64; 4] = [0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];
    let mut rng = common::rng();
    let n = 1 << 20;
    let mut a: Vec<[u64; 4]> = common::as_repr(&common::random_scalars(&mut rng, n)).to_vec();
    // 0, 1 and -1 (Montgomery forms), then the largest raw words r - 1 - k.
    for (i, s) in [Scalar::ZERO, Scalar::ONE, -Scalar::ONE].iter().enumerate() {
        a[i] = common::as_repr(std::slice::from_ref(s))[0];
    }
    for k in 0..8u64 {
        let mut raw = FR_MODULUS;
        raw[0] -= 1 + k;
        a[3 + k as usize] = raw;
    }
    let la: Vec<u64> = a.iter().flatten().copied().collect();
    let mut out = vec![0u64; la.len()];
    cuzk_sys::field_test::fr_from_mont_emulated(&la, &mut out).unwrap();
    for (i, x) in a.iter().enumerate() {
        let mut want = blst_scalar::default();
        unsafe { blst_scalar_from_fr(&mut want, &blst_fr { l: *x }) };
        let want: Vec<u64> = want.b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(&out[4 * i..4 * i + 4], &want[..], "emulated Fr reduction differs at {i}");
    }
    println!("Fr Montgomery reduction (host emulation): {n} results equal blst");
}

/// a b - c d with one reduction (native/ff/mont.cuh, mul_sub) against blst:
/// random operands, then 0, 1, -1 and p - 1 in every position (c = 0 makes
/// the sequence's m - c equal to m, its largest operand).
fn check_fp_mul_sub(device: i32, n: usize) {
    let mut rng = common::rng();
    let mut ops: [Vec<blst_fp>; 4] = std::array::from_fn(|_| (0..n).map(|_| random_fp(&mut rng)).collect());
    let mut p_minus_1 = FP_MODULUS;
    p_minus_1[0] -= 1;
    let mut edges = fp_edge_cases().to_vec();
    edges.push(blst_fp { l: p_minus_1 });
    let mut i = 0;
    for op in ops.iter_mut() {
        for e in &edges {
            op[i] = *e;
            i += 1;
        }
    }
    for (j, e) in edges.iter().enumerate() {
        for op in ops.iter_mut() {
            op[i + j] = *e; // all four equal
        }
    }
    let limbs: Vec<Vec<u64>> = ops.iter().map(|v| v.iter().flat_map(|x| x.l).collect()).collect();
    let mut out = vec![0u64; 6 * n];
    cuzk_sys::field_test::fp_mul_sub(device, &limbs[0], &limbs[1], &limbs[2], &limbs[3], &mut out).unwrap();
    for i in 0..n {
        let (mut ab, mut cd, mut want) = (blst_fp::default(), blst_fp::default(), blst_fp::default());
        unsafe {
            blst_fp_mul(&mut ab, &ops[0][i], &ops[1][i]);
            blst_fp_mul(&mut cd, &ops[2][i], &ops[3][i]);
            blst_fp_sub(&mut want, &ab, &cd);
        }
        assert_eq!(out[6 * i..6 * i + 6], want.l, "Fp a b - c d differs at {i}");
    }
}

#[test]
fn fp_mul_sub_matches_blst() {
    let Some(dev) = cuzk_sys::test_device("fp_mul_sub_matches_blst") else { return };
    let n = 1 << 21;
    check_fp_mul_sub(dev, n);
    println!("Fp a b - c d on the device: {n} results equal blst");
}

#[test]
fn fp_ops_match_blst() {
    let Some(dev) = cuzk_sys::test_device("fp_ops_match_blst") else { return };
    let mut rng = common::rng();
    let n = 1 << 21;
    let mut a: Vec<blst_fp> = (0..n).map(|_| random_fp(&mut rng)).collect();
    let b: Vec<blst_fp> = (0..n).map(|_| random_fp(&mut rng)).collect();
    a[..3].copy_from_slice(&fp_edge_cases());
    let la: Vec<u64> = a.iter().flat_map(|x| x.l).collect();
    let lb: Vec<u64> = b.iter().flat_map(|x| x.l).collect();
    let mut out = vec![0u64; la.len()];
    for op in OPS {
        field_op(dev, Field::CUZK_TEST_FP, op, &la, &lb, &mut out).unwrap();
        for i in 0..n {
            let mut want = blst_fp::default();
            unsafe {
                match op {
                    Op::CUZK_TEST_ADD => blst_fp_add(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_SUB => blst_fp_sub(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_MUL => blst_fp_mul(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_SQR => blst_fp_sqr(&mut want, &a[i]),
                    _ => blst_fp_cneg(&mut want, &a[i], true),
                }
            }
            assert_eq!(out[6 * i..6 * i + 6], want.l, "Fp {op:?} differs at {i}");
        }
        println!("Fp {op:?}: {n} results equal blst");
    }
}

#[test]
fn fp2_ops_match_blst() {
    let Some(dev) = cuzk_sys::test_device("fp2_ops_match_blst") else { return };
    let mut rng = common::rng();
    let n = 1 << 20;
    let mut gen = || blst_fp2 { fp: [random_fp(&mut rng), random_fp(&mut rng)] };
    let mut a: Vec<blst_fp2> = (0..n).map(|_| gen()).collect();
    let b: Vec<blst_fp2> = (0..n).map(|_| gen()).collect();
    let [zero, one, minus_one] = fp_edge_cases();
    a[0] = blst_fp2 { fp: [zero, zero] };
    a[1] = blst_fp2 { fp: [one, zero] };
    a[2] = blst_fp2 { fp: [zero, minus_one] };
    let la: Vec<u64> = a.iter().flat_map(|x| x.fp.iter().flat_map(|f| f.l)).collect();
    let lb: Vec<u64> = b.iter().flat_map(|x| x.fp.iter().flat_map(|f| f.l)).collect();
    let mut out = vec![0u64; la.len()];
    for op in OPS {
        field_op(dev, Field::CUZK_TEST_FP2, op, &la, &lb, &mut out).unwrap();
        for i in 0..n {
            let mut want = blst_fp2::default();
            unsafe {
                match op {
                    Op::CUZK_TEST_ADD => blst_fp2_add(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_SUB => blst_fp2_sub(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_MUL => blst_fp2_mul(&mut want, &a[i], &b[i]),
                    Op::CUZK_TEST_SQR => blst_fp2_sqr(&mut want, &a[i]),
                    _ => blst_fp2_cneg(&mut want, &a[i], true),
                }
            }
            let w: Vec<u64> = want.fp.iter().flat_map(|f| f.l).collect();
            assert_eq!(out[12 * i..12 * i + 12], w[..], "Fp2 {op:?} differs at {i}");
        }
        println!("Fp2 {op:?}: {n} results equal blst");
    }
}
