//! The per-GPU lock object of native/gpu_locks.cu: `mem` guards VRAM
//! allocation and pre-staging, `compute` guards kernel execution. Guards
//! unlock on drop and stay on the thread that locked (they are not Send).

use std::marker::PhantomData;
use std::ptr;

use crate::error::{call, Result};
use crate::ffi;

pub struct GpuLocks {
    raw: *mut ffi::cuzk_gpu_locks,
}

// The native object is two std::mutex: shareable across threads.
unsafe impl Send for GpuLocks {}
unsafe impl Sync for GpuLocks {}

impl GpuLocks {
    pub fn new(ordinal: i32) -> Result<Self> {
        let mut raw = ptr::null_mut();
        call(|e| unsafe { ffi::cuzk_gpu_locks_create(ordinal, &mut raw, e) })?;
        Ok(GpuLocks { raw })
    }

    pub fn ordinal(&self) -> i32 {
        unsafe { ffi::cuzk_gpu_locks_ordinal(self.raw) }
    }

    /// Locks `mem` (VRAM allocation, uploads) until the guard drops.
    pub fn lock_mem(&self) -> Result<MemGuard<'_>> {
        call(|e| unsafe { ffi::cuzk_gpu_locks_lock_mem(self.raw, e) })?;
        Ok(MemGuard { locks: self, _not_send: PhantomData })
    }

    /// Locks `compute` (kernel execution) until the guard drops.
    pub fn lock_compute(&self) -> Result<ComputeGuard<'_>> {
        call(|e| unsafe { ffi::cuzk_gpu_locks_lock_compute(self.raw, e) })?;
        Ok(ComputeGuard { locks: self, _not_send: PhantomData })
    }

    /// The raw pointer, for native code that takes the locks itself.
    pub fn as_raw(&self) -> *mut ffi::cuzk_gpu_locks {
        self.raw
    }
}

impl Drop for GpuLocks {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_gpu_locks_destroy(self.raw, e) });
    }
}

pub struct MemGuard<'a> {
    locks: &'a GpuLocks,
    _not_send: PhantomData<*const ()>,
}

impl Drop for MemGuard<'_> {
    fn drop(&mut self) {
        unsafe { ffi::cuzk_gpu_locks_unlock_mem(self.locks.raw) }
    }
}

pub struct ComputeGuard<'a> {
    locks: &'a GpuLocks,
    _not_send: PhantomData<*const ()>,
}

impl Drop for ComputeGuard<'_> {
    fn drop(&mut self) {
        unsafe { ffi::cuzk_gpu_locks_unlock_compute(self.locks.raw) }
    }
}
