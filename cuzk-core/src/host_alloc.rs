//! A global allocator for processes that free multi-gigabyte buffers while
//! other threads allocate.
//!
//! The system allocator frees such a block with one `munmap`, which holds
//! the process's memory map for writing while it gives every page back
//! (seconds for the a, b, c and witness of a 2^27 partition), and every
//! `mmap` another thread makes meanwhile waits behind it: a large
//! allocation, a CUDA allocation, a pinning. In the engine that stalled the
//! next partition's H term, or a WinningPoSt, behind the previous
//! partition's free. [`ChunkedRelease`] first gives a large block's pages
//! back with `madvise(MADV_DONTNEED)`, a chunk at a time (each under the
//! map's read lock, so a waiting `mmap` runs between two chunks), then
//! frees the emptied block, which is then quick.
//!
//! The cuzk binaries use it. A program that links cuzk-core and proves at
//! production size declares it as its own:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: cuzk_core::host_alloc::ChunkedRelease = cuzk_core::host_alloc::ChunkedRelease;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with blocks of [`LARGE`] bytes or more released
/// in chunks before they are freed (Linux; elsewhere the system allocator
/// as it is).
pub struct ChunkedRelease;

/// Blocks from this size on are released in chunks (the system allocator
/// maps each such block on its own).
pub const LARGE: usize = 64 << 20;

/// Pages given back per `madvise`: a few milliseconds of work, the longest
/// an `mmap` of another thread waits.
const CHUNK: usize = 128 << 20;

unsafe impl GlobalAlloc for ChunkedRelease {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            release_pages(ptr, layout.size());
        }
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        System.realloc(ptr, layout, new_size)
    }
}

/// Gives back to the system the whole pages inside `[ptr, ptr + len)`,
/// [`CHUNK`] bytes per call; the partial pages at either end (which may
/// hold the allocator's bookkeeping) are left as they are. Reading a page
/// given back yields zeros.
///
/// # Safety
/// Nothing may use the contents of `[ptr, ptr + len)` afterwards: the
/// range is memory its owner is about to free.
#[cfg(target_os = "linux")]
pub unsafe fn release_pages(ptr: *mut u8, len: usize) {
    let Some(page) = page_size() else { return };
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + len) / page * page;
    let mut at = start;
    while at < end {
        let n = CHUNK.min(end - at);
        // A refusal leaves the pages to the free that follows.
        libc::madvise(at as *mut libc::c_void, n, libc::MADV_DONTNEED);
        at += n;
    }
}

#[cfg(target_os = "linux")]
fn page_size() -> Option<usize> {
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|&p| p > 0)
}

/// Elsewhere the free gives the pages back as it does.
///
/// # Safety
/// As on Linux.
#[cfg(not(target_os = "linux"))]
pub unsafe fn release_pages(_ptr: *mut u8, _len: usize) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn page() -> usize {
        page_size().expect("the page size")
    }

    #[test]
    fn release_pages_zeroes_the_whole_pages_inside_and_nothing_else() {
        let page = page();
        let mut buf = vec![0xABu8; 12 * page];
        let base = buf.as_ptr() as usize;
        // An unaligned range: 100 bytes into the buffer's first whole page,
        // five and a half pages long.
        let first = base.next_multiple_of(page) - base;
        let (from, len) = (first + 100, 5 * page + page / 2);
        unsafe { release_pages(buf.as_mut_ptr().add(from), len) };
        let zero_from = (base + from).next_multiple_of(page) - base;
        let zero_to = (base + from + len) / page * page - base;
        assert_eq!(zero_to - zero_from, 4 * page, "four whole pages lie inside the range");
        for (i, &v) in buf.iter().enumerate() {
            let expect = if (zero_from..zero_to).contains(&i) { 0 } else { 0xAB };
            assert_eq!(v, expect, "byte {i} (range {from}..{}, pages {zero_from}..{zero_to})", from + len);
        }
    }

    #[test]
    fn a_range_within_one_page_is_left_alone() {
        let page = page();
        let mut buf = vec![7u8; 3 * page];
        unsafe { release_pages(buf.as_mut_ptr().add(1), page - 2) };
        assert!(buf.iter().all(|&v| v == 7));
    }

    #[test]
    fn large_blocks_keep_their_contents_until_freed_and_free_cleanly() {
        let a = ChunkedRelease;
        let layout = Layout::from_size_align(LARGE + 3 * CHUNK + 12_345, 64).unwrap();
        for round in 0..3u8 {
            unsafe {
                let p = a.alloc(layout);
                assert!(!p.is_null());
                let s = std::slice::from_raw_parts_mut(p, layout.size());
                s.iter_mut().step_by(4096).for_each(|v| *v = round + 1);
                s[layout.size() - 1] = round + 2;
                // Grown through realloc: the contents move with the block.
                let bigger = layout.size() + CHUNK;
                let q = a.realloc(p, layout, bigger);
                assert!(!q.is_null());
                let s = std::slice::from_raw_parts(q, bigger);
                assert!(s[..layout.size()].iter().step_by(4096).all(|&v| v == round + 1));
                assert_eq!(s[layout.size() - 1], round + 2);
                a.dealloc(q, Layout::from_size_align(bigger, 64).unwrap());
            }
        }
        // Small blocks go to the system allocator as they are.
        let small = Layout::from_size_align(4096, 8).unwrap();
        unsafe {
            let p = a.alloc_zeroed(small);
            assert!(std::slice::from_raw_parts(p, 4096).iter().all(|&v| v == 0));
            a.dealloc(p, small);
        }
    }
}
