//! The cores synthesis may use (`synthesis.threads`), shared out among the
//! partitions being synthesized. A witness-only synthesis can run on
//! several threads where its circuit has independent parts (a PoRep
//! partition's challenges, a PoSt partition's sectors), so a partition
//! takes the cores no other synthesis holds, divided among itself and the
//! units still queued behind it: a lone partition (a WindowPoSt partition
//! of 2349 sectors) gets the idle cores, and a busy engine keeps one
//! thread per partition, as it has one worker per core.

use std::sync::Mutex;

pub struct SynthesisCores {
    total: usize,
    held: Mutex<usize>,
}

/// Cores held by one synthesis unit; given back on drop.
pub struct Cores<'a> {
    pool: &'a SynthesisCores,
    n: usize,
}

impl SynthesisCores {
    pub fn new(total: usize) -> Self {
        SynthesisCores { total: total.max(1), held: Mutex::new(0) }
    }

    /// Cores for one unit that can use `wanted` while `waiting` other
    /// units are queued: the free ones divided among them all, at least
    /// one (a partition always runs, on its worker's own thread, even when
    /// urgent workers outnumber the cores).
    pub fn take(&self, wanted: usize, waiting: usize) -> Cores<'_> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let free = self.total.saturating_sub(*held);
        let n = (free / (waiting + 1)).clamp(1, wanted.max(1));
        *held += n;
        Cores { pool: self, n }
    }
}

impl Cores<'_> {
    pub fn threads(&self) -> usize {
        self.n
    }
}

impl Drop for Cores<'_> {
    fn drop(&mut self) {
        *self.pool.held.lock().unwrap_or_else(|e| e.into_inner()) -= self.n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: usize = usize::MAX;

    #[test]
    fn a_lone_unit_takes_every_free_core_it_can_use() {
        let cores = SynthesisCores::new(16);
        assert_eq!(cores.take(ANY, 0).threads(), 16);
        // Given back on drop: the next lone unit has them all again.
        let busy = cores.take(ANY, 0);
        assert_eq!(busy.threads(), 16);
        assert_eq!(cores.take(ANY, 0).threads(), 1, "every core held: one thread, never none");
        drop(busy);
        let one = cores.take(1, 0);
        assert_eq!(one.threads(), 1, "a circuit without independent parts holds one core");
        assert_eq!(cores.take(ANY, 0).threads(), 15, "and leaves the others free");
        assert_eq!(cores.take(0, 0).threads(), 1);
    }

    #[test]
    fn queued_units_share_the_free_cores() {
        let cores = SynthesisCores::new(16);
        let first = cores.take(ANY, 3);
        assert_eq!(first.threads(), 4, "16 free cores among 4 units");
        let held: Vec<_> = (0..12).map(|_| cores.take(ANY, 20)).collect();
        assert!(held.iter().all(|c| c.threads() == 1), "a full queue: one thread per unit");
        assert_eq!(cores.take(ANY, 0).threads(), 1, "4 + 12 cores held: none free");
        drop(first);
        assert_eq!(cores.take(ANY, 1).threads(), 2, "4 free cores among 2 units");
    }
}
