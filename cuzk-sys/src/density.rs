//! Density compaction on the device (native/msm/density.cu): the scalars of
//! the variables a query uses, moved together to line up with the query's
//! dense point list, from a witness already in device memory.
//!
//! The compaction's scratch (the bitmap, per-word counts and ranks, CUB's
//! scan space) lives in the destination right after the elements it
//! writes, whose number the caller knows (the query's set bits), so it is
//! in every memory plan that counts the destination; see
//! [`compact_fr_room`].

use std::ffi::c_void;

use crate::device::{DeviceBuffer, Stream};
use crate::error::{call, Error, Result};
use crate::{ffi, FrRepr};

/// A bound on the scratch bytes for compacting n elements: 16 bytes per
/// bitmap word (the word, its count and rank), CUB's scan space (a few
/// bytes per 1000 words in CUB 3; n / 32 is two bytes per word, over 100x
/// that) and alignment. `density.rs`'s GPU test checks it against the exact
/// size from 1 to 2^28.
pub fn compact_fr_scratch_bound(n: usize) -> usize {
    16 * n.div_ceil(64) + n / 32 + (64 << 10) + 512
}

/// Elements a destination needs to compact n elements of which `ones` are
/// set: `ones` for the scalars and the scratch after them.
pub fn compact_fr_room(n: usize, ones: usize) -> usize {
    ones + compact_fr_scratch_bound(n).div_ceil(std::mem::size_of::<FrRepr>())
}

/// The exact scratch bytes the device code needs for n elements (for tests
/// of [`compact_fr_scratch_bound`]).
pub fn compact_fr_scratch_bytes(n: usize) -> Result<u64> {
    let mut bytes = 0u64;
    call(|e| unsafe { ffi::cuzk_compact_fr_scratch_bytes(n as u64, &mut bytes, e) })?;
    Ok(bytes)
}

/// Enqueues `dst[k] = src[i]` on `stream` for the k-th set bit `i < n` of
/// `bits` (bit i at position i % 64 of word i / 64; bits from n on are
/// ignored) and returns how many bits were set. `ones` is the caller's
/// count of them (a query knows its own); the device counts too, and more
/// than `ones` is an error before anything is written. `dst` must hold
/// [`compact_fr_room`]`(n, ones)` elements: those past `ones` are scratch,
/// overwritten until the stream passes the compaction. `bits` may be
/// reused when this returns.
pub fn compact_fr(
    stream: &Stream,
    src: &DeviceBuffer<FrRepr>,
    n: usize,
    bits: &[u64],
    ones: usize,
    dst: &mut DeviceBuffer<FrRepr>,
) -> Result<usize> {
    if n > src.len() {
        return Err(Error::invalid(format!("density compaction: {n} elements from a buffer of {}", src.len())));
    }
    if bits.len() < n.div_ceil(64) {
        return Err(Error::invalid(format!("density compaction: a bitmap of {} words for {n} elements", bits.len())));
    }
    if src.device() != stream.device() || dst.device() != stream.device() {
        return Err(Error::invalid("density compaction: stream and buffers on different devices"));
    }
    if ones > n {
        return Err(Error::invalid(format!("density compaction: {ones} set bits among {n} elements")));
    }
    if dst.len() < compact_fr_room(n, ones) {
        return Err(Error::invalid(format!(
            "density compaction: a destination of {} elements for {ones} of {n} (room for {} needed: the \
             scalars and the scratch)",
            dst.len(),
            compact_fr_room(n, ones)
        )));
    }
    let mut count = 0u64;
    let elem = std::mem::size_of::<FrRepr>();
    let tmp_bytes = ((dst.len() - ones) * elem) as u64;
    let base = dst.as_mut_ptr() as *mut u8;
    call(|e| unsafe {
        ffi::cuzk_compact_fr(
            stream.raw(),
            src.as_ptr(),
            n as u64,
            bits.as_ptr(),
            base as *mut c_void,
            ones as u64,
            base.add(ones * elem) as *mut c_void,
            tmp_bytes,
            &mut count,
            e,
        )
    })?;
    Ok(count as usize)
}
