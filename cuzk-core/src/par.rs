//! Data parallelism on plain OS threads (`std::thread::scope`).
//!
//! The prover's CPU work is a handful of embarrassingly parallel loops over
//! large slices; these helpers split a slice into one contiguous chunk per
//! thread so every loop reads memory sequentially.

use std::sync::atomic::{AtomicUsize, Ordering};

static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Number of worker threads for CPU loops: `CUZK_THREADS` if set, else the
/// number of CPUs. [`set_threads`] overrides both.
pub fn threads() -> usize {
    let n = THREADS.load(Ordering::Relaxed);
    if n != 0 {
        return n;
    }
    let n = std::env::var("CUZK_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    THREADS.store(n, Ordering::Relaxed);
    n
}

/// Sets the thread count used by every parallel loop in this process.
pub fn set_threads(n: usize) {
    THREADS.store(n.max(1), Ordering::Relaxed);
}

/// Chunk length that splits `len` items over the threads: at least `min`
/// and a multiple of it (so `min` doubles as the granularity, e.g. the
/// byte size of one encoded point).
pub(crate) fn chunk_len(len: usize, min: usize) -> usize {
    let min = min.max(1);
    len.div_ceil(threads()).max(min).div_ceil(min) * min
}

/// Calls `f(offset, chunk)` on disjoint mutable chunks of `data` in parallel.
pub fn for_each_chunk_mut<T: Send>(data: &mut [T], min_chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let chunk = chunk_len(data.len(), min_chunk);
    if chunk >= data.len() {
        f(0, data);
        return;
    }
    std::thread::scope(|s| {
        let f = &f;
        for (i, c) in data.chunks_mut(chunk).enumerate() {
            s.spawn(move || f(i * chunk, c));
        }
    });
}

/// Calls `f(offset, chunk)` on chunks of `data` in parallel and returns the
/// results in chunk order.
pub fn map_chunks<T: Sync, R: Send>(data: &[T], min_chunk: usize, f: impl Fn(usize, &[T]) -> R + Sync) -> Vec<R> {
    let chunk = chunk_len(data.len(), min_chunk);
    if chunk >= data.len() {
        return vec![f(0, data)];
    }
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = data.chunks(chunk).enumerate().map(|(i, c)| s.spawn(move || f(i * chunk, c))).collect();
        handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
    })
}

/// Splits `0..len` into one range per thread and returns `f(range)` for each.
pub fn map_ranges<R: Send>(len: usize, min_chunk: usize, f: impl Fn(std::ops::Range<usize>) -> R + Sync) -> Vec<R> {
    let chunk = chunk_len(len, min_chunk);
    if chunk >= len {
        return vec![f(0..len)];
    }
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..len).step_by(chunk).map(|start| s.spawn(move || f(start..(start + chunk).min(len)))).collect();
        handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
    })
}

/// The first index below `len` where `hit` holds, searched in parallel
/// (each thread its own range, the lowest hit wins).
pub fn first_index(len: usize, min_chunk: usize, hit: impl Fn(usize) -> bool + Sync) -> Option<usize> {
    map_ranges(len, min_chunk, |range| range.into_iter().find(|&i| hit(i))).into_iter().flatten().min()
}

/// Builds a vector of `len` items with `f(index)` in parallel.
pub fn collect_indexed<T: Send + Default + Clone>(len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out = vec![T::default(); len];
    for_each_chunk_mut(&mut out, 1024, |off, chunk| {
        for (i, o) in chunk.iter_mut().enumerate() {
            *o = f(off + i);
        }
    });
    out
}
