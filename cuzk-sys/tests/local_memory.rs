//! The MSMs' local memory is taken up front
//! (`cuzk_sys::msm::reserve_local_memory`): afterwards, the first G1 and G2
//! MSMs leave free device memory where it was, give or take module loading.
//! A test binary of its own: the driver's local-memory pool never shrinks,
//! so an MSM run earlier in the same process would hide what this checks.

mod common;

use blstrs::{G1Affine, G2Affine};
use common::to_raw;
use cuzk_sys::free_memory;
use cuzk_sys::msm::{self, Input, G1, G2};
use group::prime::PrimeCurveAffine;

#[test]
fn gpu_msm_local_memory_reserved_up_front() {
    let Some(dev) = cuzk_sys::test_device("gpu_msm_local_memory_reserved_up_front") else { return };
    let stack = msm::reserve_local_memory(dev).unwrap();
    assert!(stack >= 1024, "a stack limit of {stack} bytes, under CUDA's default of 1 KiB");
    let before = free_memory(dev).unwrap();

    let n = 5000;
    let scalars = common::random_scalars(&mut common::rng(), n);
    let scalars = common::as_repr(&scalars);
    let g1: Vec<_> = vec![to_raw::<msm::G1AffineRepr, _>(G1Affine::generator()); n];
    let g2: Vec<_> = vec![to_raw::<msm::G2AffineRepr, _>(G2Affine::generator()); n];
    msm::msm::<G1>(dev, Input::Host(&g1), Input::Host(scalars), None).unwrap();
    msm::msm::<G2>(dev, Input::Host(&g2), Input::Host(scalars), None).unwrap();

    let after = free_memory(dev).unwrap();
    let taken = before.saturating_sub(after);
    // Without the reservation the G2 reduction's 2.6 KiB frame grows the
    // pool by ~430 MiB on an H200 (264 MiB per KiB of stack).
    assert!(taken < 64 << 20, "the first MSMs took {} MiB of device memory after the reservation", taken >> 20);
    assert_eq!(msm::reserve_local_memory(dev).unwrap(), stack, "an MSM raised the stack limit");
    println!("stack limit {stack} bytes a thread, reserved up front; the first G1 and G2 MSMs then took {} KiB", taken >> 10);
}
