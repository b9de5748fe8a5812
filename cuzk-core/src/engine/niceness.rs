//! Scheduling niceness of the engine's threads (`synthesis.nice`).
//!
//! Bulk synthesis runs below the threads that feed the GPU. A partition
//! worker's witness generation and sparse products use every core, and
//! several of them run at once; the prover workers' host steps between
//! two kernels (a, b, c copied into pinned buffers by eight threads,
//! scalars compacted) are short but stand on the GPU's critical path. At
//! equal priority those steps get a fraction of the cores and the GPU waits
//! for them, so the partition workers are made nicer; the prover workers
//! and the urgent-only synthesis workers keep the daemon's priority.
//!
//! Niceness only rises without privilege: a worker is made nicer once, for
//! its life, and the threads it starts inherit its niceness (Linux).

/// Makes the calling thread `by` nicer than it is now (at most
/// [`MAX_NICE`](crate::config::MAX_NICE)) and returns its niceness. On other systems, where
/// niceness belongs to the whole process, it does nothing.
pub fn lower_this_thread(by: u8) -> std::io::Result<i32> {
    imp::lower_this_thread(by)
}

/// The calling thread's niceness (0 elsewhere than on Linux).
pub fn this_thread() -> std::io::Result<i32> {
    imp::this_thread()
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io::Error;

    fn tid() -> libc::id_t {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as libc::id_t }
    }

    pub fn this_thread() -> std::io::Result<i32> {
        // getpriority returns -1 both as a niceness and on error: errno
        // tells them apart.
        // SAFETY: errno is this thread's; getpriority reads this thread's
        // niceness.
        unsafe {
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, tid());
            if nice == -1 && *libc::__errno_location() != 0 {
                return Err(Error::last_os_error());
            }
            Ok(nice)
        }
    }

    pub fn lower_this_thread(by: u8) -> std::io::Result<i32> {
        let now = this_thread()?;
        let target = (now + i32::from(by)).min(i32::from(crate::config::MAX_NICE));
        if target == now {
            return Ok(now);
        }
        // SAFETY: sets this thread's niceness only.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid(), target) } != 0 {
            return Err(Error::last_os_error());
        }
        Ok(target)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn this_thread() -> std::io::Result<i32> {
        Ok(0)
    }

    pub fn lower_this_thread(_by: u8) -> std::io::Result<i32> {
        Ok(0)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_made_nicer_passes_it_to_the_threads_it_starts_and_no_other() {
        let base = this_thread().unwrap();
        let (lowered, child) = std::thread::spawn(|| {
            let lowered = lower_this_thread(3).unwrap();
            (lowered, std::thread::spawn(|| this_thread().unwrap()).join().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (base + 3).min(19));
        assert_eq!(child, lowered, "a thread started by a nicer thread inherits its niceness");
        assert_eq!(this_thread().unwrap(), base, "the other threads keep theirs");
        let top = std::thread::spawn(|| lower_this_thread(40).unwrap()).join().unwrap();
        assert_eq!(top, 19, "niceness stops at 19");
    }
}
