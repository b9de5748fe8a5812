//! Faults injected into the CUDA layer, and the host memory it keeps
//! page-locked, for tests (feature `testing`; native/device/fault_hook.cu).
//! The hook is process-wide: a test that arms it must be the only one
//! using the device meanwhile.

use crate::error::{call, Result};
use crate::ffi;

/// Where a fault is injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultSite {
    /// Every device allocation of native/ (the allocation is skipped).
    DeviceAlloc,
    /// Every check after a kernel launch (the device is synchronized first).
    Launch,
}

impl FaultSite {
    fn raw(self) -> ffi::cuzk_test_fault_site {
        match self {
            FaultSite::DeviceAlloc => ffi::cuzk_test_fault_site::CUZK_TEST_FAULT_DEVICE_ALLOC,
            FaultSite::Launch => ffi::cuzk_test_fault_site::CUZK_TEST_FAULT_LAUNCH,
        }
    }
}

/// CUDA errors worth injecting (cudaError_t values).
pub mod cuda {
    /// cudaErrorMemoryAllocation: out of device memory.
    pub const MEMORY_ALLOCATION: i32 = 2;
    /// cudaErrorInvalidConfiguration: a bad launch; the device stays usable.
    pub const INVALID_CONFIGURATION: i32 = 9;
    /// cudaErrorIllegalAddress: a sticky error; the context is lost.
    pub const ILLEGAL_ADDRESS: i32 = 700;
}

/// The `nth` (0 = the next) event at `site` from now fails once with CUDA
/// error `cuda_error`, on any device and thread.
pub fn inject(site: FaultSite, nth: u64, cuda_error: i32) -> Result<()> {
    call(|e| unsafe { ffi::cuzk_test_inject_fault(site.raw(), nth, cuda_error, e) })
}

/// No fault at `site` (one armed and not yet reached is dropped).
pub fn disarm(site: FaultSite) -> Result<()> {
    inject(site, 0, 0)
}

/// Faults `site` has injected since the process started.
pub fn injected(site: FaultSite) -> Result<u64> {
    let mut n = 0;
    call(|e| unsafe { ffi::cuzk_test_faults_injected(site.raw(), &mut n, e) })?;
    Ok(n)
}

/// Host bytes page-locked through native/ now (pinned buffers, registered
/// ranges, the upload slots).
pub fn pinned_bytes() -> Result<u64> {
    let mut n = 0;
    call(|e| unsafe { ffi::cuzk_test_pinned_bytes(&mut n, e) })?;
    Ok(n)
}
