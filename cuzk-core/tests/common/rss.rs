//! The test process's real resident memory (Linux), for checks of what the
//! engine holds against its memory budget that do not go through the
//! engine's own bookkeeping (which never grants past the budget, so a
//! check of it cannot fail).
//!
//! The peak is the kernel's high-water mark (VmHWM), reset to the current
//! RSS when a measurement starts (`5` written to /proc/self/clear_refs,
//! Linux 4.0 and later): it sees every page the process held at once,
//! however briefly. Where the reset is refused, a thread samples VmRSS
//! every millisecond instead (it can miss a peak shorter than that).
//! Resident memory is the whole process's: tests in the same binary that
//! run beside a measurement count in it, so a measuring test holds
//! [`alone`], and so do the others in its binary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// A field of /proc/self/status in bytes (its value is in kB).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
    Some(value.trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024)
}

/// Whether this process's RSS can be read; where not (not Linux), a
/// visible `SKIPPED:` line for `test`.
pub fn measurable(test: &str) -> bool {
    if status_bytes("VmRSS").is_some() && status_bytes("VmHWM").is_some() {
        return true;
    }
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("SKIPPED: {test}: no VmRSS and VmHWM in /proc/self/status\n").as_bytes());
    false
}

/// The process's resident memory now.
pub fn rss_bytes() -> u64 {
    status_bytes("VmRSS").expect("VmRSS in /proc/self/status")
}

/// From now on, the allocator gives blocks of 128 KiB and more back to the
/// system when they are freed, and what it keeps now goes back too: then
/// resident memory follows what the process holds. By default glibc raises
/// that threshold as large blocks are freed (up to 32 MiB), after which
/// freed buffers stay resident in its arenas for reuse: a 5.6 MiB SRS
/// generated on a thread left ~40 MiB resident after it was dropped, which
/// would count as the engine's. (Other allocators: nothing to set.)
pub fn unmap_large_blocks_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt and malloc_trim only tune and trim the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::malloc_trim(0);
    }
}

static ALONE: Mutex<()> = Mutex::new(());

/// Holds the other tests of this binary that take it off while a test
/// measures the process's memory (a failed test's poisoning is ignored).
pub fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The highest resident memory from [`PeakRss::start`] to
/// [`PeakRss::peak`].
pub struct PeakRss {
    sampler: Option<(Arc<AtomicBool>, JoinHandle<u64>)>,
}

impl PeakRss {
    /// Starts measuring now (after [`measurable`]).
    pub fn start() -> Self {
        if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
            return Self { sampler: None };
        }
        eprintln!("/proc/self/clear_refs refused: sampling VmRSS every millisecond instead");
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut peak = rss_bytes();
                while !stop.load(Ordering::Relaxed) {
                    peak = peak.max(rss_bytes());
                    std::thread::sleep(Duration::from_millis(1));
                }
                peak.max(rss_bytes())
            })
        };
        Self { sampler: Some((stop, sampler)) }
    }

    /// The peak since [`Self::start`].
    pub fn peak(self) -> u64 {
        match self.sampler {
            None => status_bytes("VmHWM").expect("VmHWM in /proc/self/status"),
            Some((stop, sampler)) => {
                stop.store(true, Ordering::Relaxed);
                sampler.join().unwrap()
            }
        }
    }
}
