//! Threads for the RPC work that blocks (SubmitProof's checks, AwaitProof,
//! Prove, PreloadSRS): reused while they are busy enough, at most `max`
//! at once, so a flood of waiting calls cannot exhaust the process's
//! threads. Work beyond `max` is refused at once, and idle threads end
//! after [`IDLE_EXIT`].

use crossbeam::channel::{self, Receiver, Sender, TrySendError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a thread without work waits for more before it ends.
pub const IDLE_EXIT: Duration = Duration::from_secs(30);

type Work = Box<dyn FnOnce() + Send>;

#[derive(Clone)]
pub struct BlockingPool {
    /// A rendezvous channel: a send succeeds only into an idle thread's
    /// hands.
    handoff: Sender<Work>,
    idle: Receiver<Work>,
    threads: Arc<AtomicUsize>,
    max: usize,
    name: &'static str,
}

/// The pool was full: `max` threads all busy.
#[derive(Debug)]
pub struct Busy {
    pub max: usize,
}

impl BlockingPool {
    pub fn new(name: &'static str, max: usize) -> Self {
        let (handoff, idle) = channel::bounded(0);
        Self { handoff, idle, threads: Arc::default(), max: max.max(1), name }
    }

    /// Runs `work` on an idle thread, or a new one while fewer than `max`
    /// exist; else gives it back refused.
    pub fn run(&self, work: impl FnOnce() + Send + 'static) -> Result<(), Busy> {
        let work: Work = match self.handoff.try_send(Box::new(work)) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Full(w)) | Err(TrySendError::Disconnected(w)) => w,
        };
        let reserved = self.threads.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max).then_some(n + 1));
        if reserved.is_err() {
            return Err(Busy { max: self.max });
        }
        let (idle, threads) = (self.idle.clone(), self.threads.clone());
        let spawned = std::thread::Builder::new().name(self.name.into()).spawn(move || {
            work();
            while let Ok(work) = idle.recv_timeout(IDLE_EXIT) {
                work();
            }
            threads.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            self.threads.fetch_sub(1, Ordering::AcqRel);
            return Err(Busy { max: self.max });
        }
        Ok(())
    }

    /// Threads that exist now (busy or idle).
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn bounded_reused_and_refusing_beyond_max() {
        let pool = BlockingPool::new("test", 4);
        let (release_tx, release) = channel::unbounded::<()>();
        let started = Arc::new(Barrier::new(5));
        for _ in 0..4 {
            let (release, started) = (release.clone(), started.clone());
            pool.run(move || {
                started.wait();
                release.recv().unwrap();
            })
            .unwrap();
        }
        started.wait();
        assert_eq!(pool.threads(), 4);
        assert_eq!(pool.run(|| {}).unwrap_err().max, 4);
        for _ in 0..4 {
            release_tx.send(()).unwrap();
        }
        // Finished threads take new work instead of new threads starting.
        let (done_tx, done) = channel::unbounded();
        for i in 0..100 {
            let done_tx = done_tx.clone();
            loop {
                let d = done_tx.clone();
                if pool.run(move || d.send(i).unwrap()).is_ok() {
                    break;
                }
                std::thread::yield_now();
            }
        }
        let mut got: Vec<i32> = (0..100).map(|_| done.recv().unwrap()).collect();
        got.sort();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
        assert!(pool.threads() <= 4);
    }
}
