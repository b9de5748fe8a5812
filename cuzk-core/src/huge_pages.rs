//! Transparent huge pages for the large buffers a proof writes right after
//! allocating them (a partition's witness; a, b and c of the CPU SpMV).
//!
//! A fresh allocation of that size is mapped lazily: its first write to
//! every 4 KiB page faults, and the kernel clears the page and updates the
//! process's page tables under a lock every writing thread contends for.
//! At 2^27 constraints a, b and c are 3 × 4 GiB, three million faults per
//! partition; with 2 MiB pages, 512 times fewer. Linux maps such pages only
//! into regions advised for them when the system's THP mode is `madvise`
//! (the common default), so these buffers are advised; where THP is
//! disabled, or on other systems, the advice changes nothing. They suit
//! buffers made again and again (one per partition), whose freed huge pages
//! the next one reuses: on the dev VM, 2 MiB pages the process had not
//! used before came erratically slower than 4 KiB ones (the SRS, loaded
//! once, is not advised).

/// Smallest buffer worth advising: a few huge pages.
const MIN_BYTES: usize = 8 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `n` elements, its allocation advised for
/// huge pages when it is large.
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::<T>::with_capacity(n);
    advise(v.as_mut_ptr().cast(), v.capacity() * std::mem::size_of::<T>());
    v
}

/// `n` zeros (mapped lazily, as `vec![0; n]` is), advised for huge pages
/// when large: for a buffer filled in place right after.
pub fn zeroed_u32s(n: usize) -> Vec<u32> {
    let mut v = vec![0u32; n];
    advise(v.as_mut_ptr().cast(), v.capacity() * 4);
    v
}

/// Advises the whole huge pages inside `len` bytes at `ptr`: the kernel
/// backs them with 2 MiB pages when they are first written.
#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, len: usize) {
    if len < MIN_BYTES {
        return;
    }
    let (start, end) = ((ptr as usize).next_multiple_of(HUGE_PAGE), (ptr as usize + len) / HUGE_PAGE * HUGE_PAGE);
    // SAFETY: [start, end) lies inside the allocation at ptr, and the
    // advice only changes how its pages are backed, not their contents.
    // A failure (THP not built into the kernel) leaves 4 KiB pages, which
    // is what the buffer had before: nothing to report.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise(_: *mut u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_vectors_hold_what_is_written() {
        for n in [0, 1, 1000, (MIN_BYTES / 32) + 12345] {
            let mut v: Vec<[u64; 4]> = vec_with_capacity(n);
            assert!(v.capacity() >= n);
            v.extend((0..n as u64).map(|i| [i, !i, i ^ 0x55, i << 3]));
            assert!(v.iter().enumerate().all(|(i, x)| *x == [i as u64, !(i as u64), i as u64 ^ 0x55, (i as u64) << 3]));
        }
    }
}
