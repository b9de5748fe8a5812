//! Devices, streams, events, device memory and pinned host memory.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr;

use crate::error::{call, Error, Result};
use crate::ffi;

/// Free memory on device `ordinal` now (cheap enough to poll).
pub fn free_memory(ordinal: i32) -> Result<u64> {
    let mut free = 0u64;
    call(|e| unsafe { ffi::cuzk_device_free_memory(ordinal, &mut free, e) })?;
    Ok(free)
}

/// Number of CUDA devices (0 without a driver, a device or a CUDA build).
pub fn device_count() -> Result<i32> {
    let mut n = 0;
    call(|e| unsafe { ffi::cuzk_device_count(&mut n, e) })?;
    Ok(n)
}

#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub ordinal: i32,
    pub name: String,
    pub total_mem_bytes: u64,
    /// Free memory when this was read.
    pub free_mem_bytes: u64,
    pub l2_bytes: u64,
    pub sm_count: i32,
    pub compute_capability: (i32, i32),
}

impl DeviceInfo {
    pub fn query(ordinal: i32) -> Result<Self> {
        let mut raw = ffi::cuzk_device_info::default();
        call(|e| unsafe { ffi::cuzk_device_get_info(ordinal, &mut raw, e) })?;
        let name: Vec<u8> = raw.name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        Ok(DeviceInfo {
            ordinal,
            name: String::from_utf8_lossy(&name).into_owned(),
            total_mem_bytes: raw.total_mem_bytes,
            free_mem_bytes: raw.free_mem_bytes,
            l2_bytes: raw.l2_bytes,
            sm_count: raw.sm_count,
            compute_capability: (raw.cc_major, raw.cc_minor),
        })
    }
}

/// The calling thread's streams at the device's greatest priority while
/// this lives (`cuzk_thread_urgent_streams`): every stream it creates, its
/// own and those native calls create for their work, so the block
/// scheduler dispatches that work's blocks ahead of other streams' waiting
/// ones. Dropped, the thread's previous setting is back. Threads the
/// urgent work spawns carry it over themselves ([`UrgentStreams::current`]).
pub struct UrgentStreams {
    was: bool,
    // The setting is the creating thread's: the guard must drop there.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl UrgentStreams {
    /// The calling thread's streams urgent (`on`) or default until the drop.
    pub fn set(on: bool) -> Self {
        let was = unsafe { ffi::cuzk_thread_urgent_streams(on as i32) } != 0;
        UrgentStreams { was, _not_send: std::marker::PhantomData }
    }

    /// Whether the calling thread creates urgent streams now.
    pub fn current() -> bool {
        let now = unsafe { ffi::cuzk_thread_urgent_streams(0) };
        unsafe { ffi::cuzk_thread_urgent_streams(now) };
        now != 0
    }
}

impl Drop for UrgentStreams {
    fn drop(&mut self) {
        unsafe { ffi::cuzk_thread_urgent_streams(self.was as i32) };
    }
}

/// A CUDA stream on one device.
pub struct Stream {
    raw: *mut ffi::cuzk_stream,
    device: i32,
}

// CUDA streams may be used from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    pub fn new(device: i32) -> Result<Self> {
        let mut raw = ptr::null_mut();
        call(|e| unsafe { ffi::cuzk_stream_create(device, &mut raw, e) })?;
        Ok(Stream { raw, device })
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    pub fn synchronize(&self) -> Result<()> {
        call(|e| unsafe { ffi::cuzk_stream_synchronize(self.raw, e) })
    }

    /// This stream's priority and its device's greatest (lower numbers run
    /// first; the default, 0, is the least): urgent where they are equal
    /// ([`UrgentStreams`]).
    pub fn priority(&self) -> Result<(i32, i32)> {
        let (mut own, mut greatest) = (0, 0);
        call(|e| unsafe { ffi::cuzk_stream_priority(self.raw, &mut own, &mut greatest, e) })?;
        Ok((own, greatest))
    }

    pub fn wait(&self, event: &Event) -> Result<()> {
        call(|e| unsafe { ffi::cuzk_stream_wait_event(self.raw, event.raw, e) })
    }

    pub(crate) fn raw(&self) -> *mut ffi::cuzk_stream {
        self.raw
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_stream_destroy(self.raw, e) });
    }
}

/// A CUDA event (timing enabled).
pub struct Event {
    raw: *mut ffi::cuzk_event,
}

unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    pub fn new(device: i32) -> Result<Self> {
        let mut raw = ptr::null_mut();
        call(|e| unsafe { ffi::cuzk_event_create(device, &mut raw, e) })?;
        Ok(Event { raw })
    }

    pub fn record(&self, stream: &Stream) -> Result<()> {
        call(|e| unsafe { ffi::cuzk_event_record(self.raw, stream.raw, e) })
    }

    pub fn synchronize(&self) -> Result<()> {
        call(|e| unsafe { ffi::cuzk_event_synchronize(self.raw, e) })
    }

    /// Milliseconds from `self` to `end`, both recorded and complete.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        let mut ms = 0f32;
        call(|e| unsafe { ffi::cuzk_event_elapsed_ms(self.raw, end.raw, &mut ms, e) })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_event_destroy(self.raw, e) });
    }
}

/// `len` elements of plain-data `T` in device memory (uninitialised).
pub struct DeviceBuffer<T: Copy> {
    ptr: *mut c_void,
    len: usize,
    device: i32,
    _t: PhantomData<T>,
}

unsafe impl<T: Copy + Send> Send for DeviceBuffer<T> {}
unsafe impl<T: Copy + Sync> Sync for DeviceBuffer<T> {}

impl<T: Copy> DeviceBuffer<T> {
    /// Allocates (cudaMalloc: synchronizes the device; keep out of hot paths).
    pub fn new(device: i32, len: usize) -> Result<Self> {
        let mut ptr = ptr::null_mut();
        call(|e| unsafe { ffi::cuzk_device_alloc(device, len * size_of::<T>(), &mut ptr, e) })?;
        Ok(DeviceBuffer { ptr, len, device, _t: PhantomData })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }

    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }

    fn check(&self, stream: &Stream, at: usize, n: usize) -> Result<()> {
        if stream.device != self.device {
            return Err(Error::invalid("stream and buffer on different devices"));
        }
        if !matches!(at.checked_add(n), Some(end) if end <= self.len) {
            return Err(Error::invalid(format!("range {at}+{n} outside a buffer of {}", self.len)));
        }
        Ok(())
    }

    /// Copies `src` to elements `at..` and waits for the copy.
    pub fn copy_from_host(&mut self, stream: &Stream, at: usize, src: &[T]) -> Result<()> {
        self.check(stream, at, src.len())?;
        let dst = unsafe { (self.ptr as *mut T).add(at) } as *mut c_void;
        call(|e| unsafe { ffi::cuzk_copy_to_device(stream.raw, dst, src.as_ptr() as *const c_void, size_of_val(src), e) })?;
        stream.synchronize()
    }

    /// Copies elements `at..at + dst.len()` to `dst` and waits for the copy.
    pub fn copy_to_host(&self, stream: &Stream, at: usize, dst: &mut [T]) -> Result<()> {
        self.check(stream, at, dst.len())?;
        let src = unsafe { (self.ptr as *const T).add(at) } as *const c_void;
        call(|e| unsafe { ffi::cuzk_copy_to_host(stream.raw, dst.as_mut_ptr() as *mut c_void, src, size_of_val(dst), e) })?;
        stream.synchronize()
    }

    /// Enqueues a copy of all of `src` into `self` (same length) on `stream`.
    pub fn copy_from_device_async(&mut self, stream: &Stream, src: &DeviceBuffer<T>) -> Result<()> {
        self.check(stream, 0, src.len)?;
        call(|e| unsafe { ffi::cuzk_copy_device_to_device(stream.raw, self.ptr, src.ptr, src.len * size_of::<T>(), e) })
    }

    /// Enqueues a copy of `src`'s elements `src_at..src_at + n` into
    /// elements `at..at + n` of `self` (same device) on `stream`.
    pub fn copy_range_from_device_async(
        &mut self,
        stream: &Stream,
        at: usize,
        src: &DeviceBuffer<T>,
        src_at: usize,
        n: usize,
    ) -> Result<()> {
        self.check(stream, at, n)?;
        src.check(stream, src_at, n)?;
        let dst = unsafe { (self.ptr as *mut T).add(at) } as *mut c_void;
        let from = unsafe { (src.ptr as *const T).add(src_at) } as *const c_void;
        call(|e| unsafe { ffi::cuzk_copy_device_to_device(stream.raw, dst, from, n * size_of::<T>(), e) })
    }

    /// Enqueues zeroing of elements `at..at + n`.
    pub fn zero_async(&mut self, stream: &Stream, at: usize, n: usize) -> Result<()> {
        self.check(stream, at, n)?;
        let dst = unsafe { (self.ptr as *mut T).add(at) } as *mut c_void;
        call(|e| unsafe { ffi::cuzk_memset_device(stream.raw, dst, 0, n * size_of::<T>(), e) })
    }
}

impl<T: Copy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_device_free(self.device, self.ptr, e) });
    }
}

/// `len` elements of `T` in page-locked host memory, zero-filled, usable as
/// a slice. `T` must be plain data for which all-zero bytes are valid.
pub struct PinnedBuffer<T: Copy> {
    ptr: *mut T,
    len: usize,
}

unsafe impl<T: Copy + Send> Send for PinnedBuffer<T> {}
unsafe impl<T: Copy + Sync> Sync for PinnedBuffer<T> {}

impl<T: Copy> PinnedBuffer<T> {
    /// # Safety
    /// All-zero bytes must be a valid `T`.
    pub unsafe fn zeroed(len: usize) -> Result<Self> {
        let mut p = ptr::null_mut();
        call(|e| ffi::cuzk_pinned_alloc(len * size_of::<T>(), &mut p, e))?;
        ptr::write_bytes(p as *mut u8, 0, len * size_of::<T>());
        Ok(PinnedBuffer { ptr: p as *mut T, len })
    }
}

impl<T: Copy> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_pinned_free(self.ptr as *mut c_void, e) });
    }
}

/// Existing host memory page-locked in place (cudaHostRegister), so that
/// uploads from it are direct DMA (~55 GB/s on the H200 host) instead of
/// copies staged through pinned slots by host threads. Unregistered on drop.
pub struct HostRegistration {
    ptr: *mut c_void,
    bytes: usize,
}

unsafe impl Send for HostRegistration {}
unsafe impl Sync for HostRegistration {}

impl HostRegistration {
    /// Page-locks the memory of `data` (nothing for an empty slice).
    ///
    /// # Safety
    /// The memory must stay allocated until the registration is dropped
    /// (drop it first: freeing registered memory leaves its pages locked).
    pub unsafe fn new<T: Copy>(data: &[T]) -> Result<Self> {
        let bytes = std::mem::size_of_val(data);
        let ptr = data.as_ptr() as *mut c_void;
        if bytes > 0 {
            call(|e| ffi::cuzk_host_register(ptr, bytes, e))?;
        }
        Ok(HostRegistration { ptr, bytes })
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if self.bytes > 0 {
            let _ = call(|e| unsafe { ffi::cuzk_host_unregister(self.ptr, e) });
        }
    }
}
