//! Bindings to cuzk's CUDA code in `native/` (the C ABI of `native/cuzk.h`),
//! plus thin safe wrappers: devices, streams, events, device and pinned
//! memory, VRAM accounting, the per-GPU locks, the NTT and the H term, the
//! G1/G2 MSMs, fixed-base multiplication (parameter generation), and sparse
//! matrix-vector products for PCE.
//!
//! Built without nvcc, the crate is its CPU-only configuration: [`AVAILABLE`]
//! is false, [`device::device_count`] is 0 and every other call returns an
//! [`Error`] with [`ErrorCode::NoCuda`].
//!
//! Feature `testing` adds what only tests and benches use: [`field_test`]
//! (device field arithmetic on host arrays), `msm::test_inputs` (MSM inputs
//! made on the device), `test_device` and [`test_faults`] (faults injected
//! into the CUDA layer, the pinned-memory count), with their native entry
//! points (native/ff/field_test.cu, native/msm/test_inputs.cu,
//! native/device/fault_hook.cu), which the library leaves out otherwise.

pub mod density;
pub mod device;
mod error;
#[cfg(feature = "testing")]
pub mod field_test;
pub mod fixed_base;
pub mod gpu_locks;
pub mod msm;
pub mod ntt;
pub mod spmv;
#[cfg(feature = "testing")]
pub mod test_faults;

/// The raw bindgen output for `native/cuzk.h`.
#[allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

pub use device::{device_count, free_memory, DeviceBuffer, DeviceInfo, Event, HostRegistration, PinnedBuffer, Stream, UrgentStreams};
pub use error::{Error, ErrorCode, Result};
pub use gpu_locks::GpuLocks;
pub use ntt::{HTermBuffers, NttContext, NttKind};
pub use spmv::{evaluate_streamed, streamed_staging_min, Csr, SpmvMatrices};

/// True when this build compiled the CUDA code (nvcc was found).
pub const AVAILABLE: bool = cfg!(cuzk_cuda);

/// An Fr element as it crosses to the device: blst's Montgomery form, four
/// little-endian u64 limbs (the memory of a `blstrs::Scalar`).
pub type FrRepr = [u64; 4];

/// True under `CUZK_REQUIRE_GPU=1` (build/gpu-run.sh sets it): on a GPU
/// host a test that cannot use the GPU (no device, a driver error, a build
/// without nvcc, an engine that fell back to the CPU) fails instead of
/// skipping, so a broken GPU host cannot pass as a skipped one.
/// Feature `testing`.
#[cfg(feature = "testing")]
pub fn gpu_required() -> bool {
    std::env::var("CUZK_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// A GPU test's skip: panics under [`gpu_required`], else prints
/// `SKIPPED: {why}`. Written to the stderr stream itself, not with
/// `eprintln!`: the test harness captures `print!`/`eprint!` (and shows
/// them only for a failing test), not writes to the stream, so the line is
/// visible in a passing `cargo test` run. Feature `testing`.
#[cfg(feature = "testing")]
pub fn test_skip(why: &str) {
    use std::io::Write;
    if gpu_required() {
        panic!("CUZK_REQUIRE_GPU=1, but {why}");
    }
    // One write of the whole line: less interleaving with the harness's.
    let _ = std::io::stderr().write_all(format!("SKIPPED: {why}\n").as_bytes());
}

/// A random test's seed: `CUZK_TEST_SEED` where set (to replay a failure),
/// else a fresh one, printed as `{tag}: CUZK_TEST_SEED=<seed>` (captured:
/// shown with a failing test's output). Feature `testing`.
#[cfg(feature = "testing")]
pub fn test_seed(tag: &str) -> u64 {
    let seed = std::env::var("CUZK_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        use std::hash::{BuildHasher, Hasher};
        // A fresh random u64 without a rand dependency in the library.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
        h.finish()
    });
    println!("{tag}: CUZK_TEST_SEED={seed}");
    seed
}

/// A visible `SKIPPED:` line (as [`test_skip`]) for a case this device is
/// too small for: not a failure even under [`gpu_required`] (a 2^28 MSM
/// cannot run on a 40 GB card). Feature `testing`.
#[cfg(feature = "testing")]
pub fn test_skip_on_this_device(why: &str) {
    use std::io::Write;
    // One write of the whole line: less interleaving with the harness's.
    let _ = std::io::stderr().write_all(format!("SKIPPED: {why}\n").as_bytes());
}

/// The device tests run on, or None after [`test_skip`] (`SKIPPED: no CUDA
/// device`, a failure under `CUZK_REQUIRE_GPU=1`) for `test`. Feature
/// `testing`.
#[cfg(feature = "testing")]
pub fn test_device(test: &str) -> Option<i32> {
    let why = match device_count() {
        Ok(n) if n > 0 => return Some(0),
        Ok(_) if !AVAILABLE => ": cuzk-sys built without nvcc".to_string(),
        Ok(_) => String::new(),
        Err(e) => format!(": {e}"),
    };
    test_skip(&format!("no CUDA device ({test}{why})"));
    None
}
