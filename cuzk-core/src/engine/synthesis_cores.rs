//! The cores synthesis may use (`synthesis.threads`), shared out among the
//! partitions being synthesized. A witness-only synthesis can run on
//! several threads where its circuit has independent parts (a PoRep
//! partition's challenges, a PoSt partition's sectors), so a partition
//! takes the cores no other synthesis holds, divided among itself and the
//! units still queued behind it: a lone partition (a WindowPoSt partition
//! of 2349 sectors) gets the idle cores, and a busy engine keeps one
//! thread per partition, as it has one worker per core. Queued units
//! count only as far as the host memory budget lets them synthesize
//! beside this one: where it holds 3 partitions of a 32 GiB PoRep (a 16
//! GiB card's host), the queue behind them waits for memory, not cores,
//! and the 3 share the cores instead of taking one each.

use std::sync::Mutex;

pub struct SynthesisCores {
    total: usize,
    held: Mutex<Held>,
}

/// Cores held, and by how many units.
#[derive(Default)]
struct Held {
    cores: usize,
    units: usize,
}

/// Cores held by one synthesis unit; given back on drop.
pub struct Cores<'a> {
    pool: &'a SynthesisCores,
    n: usize,
}

impl SynthesisCores {
    pub fn new(total: usize) -> Self {
        SynthesisCores { total: total.max(1), held: Mutex::default() }
    }

    /// Cores for one unit that can use `wanted` while `queued` other units
    /// are queued and the host budget holds `at_once` units like it
    /// (those synthesizing now and this one included): the free cores
    /// divided among this unit and the queued ones that may synthesize
    /// beside the units holding cores, at least one (a partition always
    /// runs, on its worker's own thread, even when urgent workers
    /// outnumber the cores).
    pub fn take(&self, wanted: usize, queued: usize, at_once: usize) -> Cores<'_> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let free = self.total.saturating_sub(held.cores);
        let waiting = queued.min(at_once.saturating_sub(held.units + 1));
        let n = (free / (waiting + 1)).clamp(1, wanted.max(1));
        held.cores += n;
        held.units += 1;
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
        let mut held = self.pool.held.lock().unwrap_or_else(|e| e.into_inner());
        held.cores -= self.n;
        held.units -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: usize = usize::MAX;

    #[test]
    fn a_lone_unit_takes_every_free_core_it_can_use() {
        let cores = SynthesisCores::new(16);
        assert_eq!(cores.take(ANY, 0, ANY).threads(), 16);
        // Given back on drop: the next lone unit has them all again.
        let busy = cores.take(ANY, 0, ANY);
        assert_eq!(busy.threads(), 16);
        assert_eq!(cores.take(ANY, 0, ANY).threads(), 1, "every core held: one thread, never none");
        drop(busy);
        let one = cores.take(1, 0, ANY);
        assert_eq!(one.threads(), 1, "a circuit without independent parts holds one core");
        assert_eq!(cores.take(ANY, 0, ANY).threads(), 15, "and leaves the others free");
        assert_eq!(cores.take(0, 0, ANY).threads(), 1);
    }

    #[test]
    fn queued_units_share_the_free_cores() {
        let cores = SynthesisCores::new(16);
        let first = cores.take(ANY, 3, ANY);
        assert_eq!(first.threads(), 4, "16 free cores among 4 units");
        let held: Vec<_> = (0..12).map(|_| cores.take(ANY, 20, ANY)).collect();
        assert!(held.iter().all(|c| c.threads() == 1), "a full queue: one thread per unit");
        assert_eq!(cores.take(ANY, 0, ANY).threads(), 1, "4 + 12 cores held: none free");
        drop(first);
        assert_eq!(cores.take(ANY, 1, ANY).threads(), 2, "4 free cores among 2 units");
    }

    #[test]
    fn units_the_budget_cannot_hold_beside_do_not_share_the_cores() {
        // 3 partitions in host memory at once, 7 more queued for it.
        let cores = SynthesisCores::new(16);
        let first = cores.take(ANY, 7, 3);
        assert_eq!(first.threads(), 5, "16 cores among the 3 the budget holds, not among 8");
        let second = cores.take(ANY, 6, 3);
        assert_eq!(second.threads(), 5, "11 free among itself and the one more the budget holds");
        drop(first);
        // The first is proving (its memory held, its cores back): the next
        // unit shares with the last one the budget holds beside.
        assert_eq!(cores.take(ANY, 5, 3).threads(), 5);
        let cores = SynthesisCores::new(16);
        assert_eq!(cores.take(ANY, 7, 1).threads(), 16, "the budget holds one: it takes them all");
        assert_eq!(SynthesisCores::new(16).take(ANY, 2, 19).threads(), 5, "a short queue the budget holds: shared as before");
        assert_eq!(SynthesisCores::new(16).take(18, 30, 19).threads(), 1, "a long one: a thread each");
    }
}
