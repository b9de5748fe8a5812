//! A device's real memory in use (its total less what cudaMemGetInfo
//! reports free), for checks of what the engine takes on a GPU against
//! `gpus.vram_limit` that do not go through the engine's own count (which
//! never grants past its budget, so a check of it cannot fail).
//!
//! The figure is the whole device's, every process and thread on it
//! included: a measuring test holds [`alone`], and so do the other GPU
//! tests of its binary; other processes must leave the device alone
//! meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often [`VramPeak`] samples. A buffer lives at least as long as the
/// kernels that use it (cudaMalloc and cudaFree synchronize the device),
/// milliseconds for any working set worth measuring.
const SAMPLE_EVERY: Duration = Duration::from_micros(200);

static ALONE: Mutex<()> = Mutex::new(());

/// Holds the other GPU tests of this binary that take it off while a test
/// measures the device's memory (a failed test's poisoning is ignored).
pub fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Device `ordinal`'s memory in use now.
pub fn used_bytes(ordinal: i32) -> u64 {
    let total = cuzk_sys::DeviceInfo::query(ordinal).expect("device info").total_mem_bytes;
    total - cuzk_sys::free_memory(ordinal).expect("cudaMemGetInfo")
}

/// The highest memory in use on a device from [`VramPeak::start`] to
/// [`VramPeak::peak`], sampled by a thread every [`SAMPLE_EVERY`].
pub struct VramPeak {
    stop: Arc<AtomicBool>,
    sampler: JoinHandle<u64>,
}

impl VramPeak {
    pub fn start(ordinal: i32) -> Self {
        let total = cuzk_sys::DeviceInfo::query(ordinal).expect("device info").total_mem_bytes;
        let used = move || total - cuzk_sys::free_memory(ordinal).expect("cudaMemGetInfo");
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut peak = used();
                while !stop.load(Ordering::Relaxed) {
                    peak = peak.max(used());
                    std::thread::sleep(SAMPLE_EVERY);
                }
                peak.max(used())
            })
        };
        Self { stop, sampler }
    }

    pub fn peak(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.sampler.join().expect("the VRAM sampler panicked")
    }
}
