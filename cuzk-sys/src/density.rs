//! Density compaction on the device (native/msm/density.cu): the scalars of
//! the variables a query uses, moved together to line up with the query's
//! dense point list, from a witness already in device memory.

use std::ffi::c_void;

use crate::device::{DeviceBuffer, Stream};
use crate::error::{call, Error, Result};
use crate::{ffi, FrRepr};

/// Enqueues `dst[k] = src[i]` on `stream` for the k-th set bit `i < n` of
/// `bits` (bit i at position i % 64 of word i / 64; bits from n on are
/// ignored) and returns how many bits were set. `dst` must have room for
/// them; `bits` may be reused when this returns.
pub fn compact_fr(
    stream: &Stream,
    src: &DeviceBuffer<FrRepr>,
    n: usize,
    bits: &[u64],
    dst: &mut DeviceBuffer<FrRepr>,
) -> Result<usize> {
    if n > src.len() {
        return Err(Error::invalid(format!("density compaction: {n} elements from a buffer of {}", src.len())));
    }
    if bits.len() < n.div_ceil(64) {
        return Err(Error::invalid(format!(
            "density compaction: a bitmap of {} words for {n} elements",
            bits.len()
        )));
    }
    if src.device() != stream.device() || dst.device() != stream.device() {
        return Err(Error::invalid("density compaction: stream and buffers on different devices"));
    }
    let mut count = 0u64;
    let dst_len = dst.len() as u64;
    call(|e| unsafe {
        ffi::cuzk_compact_fr(
            stream.raw(),
            src.as_ptr(),
            n as u64,
            bits.as_ptr(),
            dst.as_mut_ptr() as *mut c_void,
            dst_len,
            &mut count,
            e,
        )
    })?;
    Ok(count as usize)
}
