//! The host memory budget: every SRS entry and every synthesized partition
//! holds a [`Reservation`] for its estimated bytes, so the sum never
//! exceeds the budget. Synthesis waits for room; SRS entries idle long
//! enough are evicted to make room (the caller's pressure hook).
//!
//! Urgent partitions ([`super::request::Priority::is_urgent`]) come first:
//! the last `memory.urgent_reserve` bytes of the budget are theirs alone,
//! and while one waits for room no other reservation takes any, so the
//! memory a proved partition frees goes to it.

use crate::config::{format_size, MemoryConfig, TotalBudget};
use crate::srs::KeyShape;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Purpose {
    Srs,
    Partition,
    /// A circuit's pre-compiled constraint system (kept for the engine's life).
    Pce,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryUsage {
    pub budget_bytes: u64,
    pub used_bytes: u64,
    pub peak_bytes: u64,
    pub srs_bytes: u64,
    /// The most bytes SRS entries held at once (a load straight to the
    /// devices holds a few slices of its file, never the whole SRS).
    pub srs_peak_bytes: u64,
    pub partition_bytes: u64,
    pub pce_bytes: u64,
}

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReserveError {
    #[error("needs {}{} but the whole memory budget is {} (raise memory.total_budget)", format_size(*need), if *pinned > 0 { format!(" next to {} it cannot free", format_size(*pinned)) } else { String::new() }, format_size(*budget))]
    TooLarge { need: u64, pinned: u64, budget: u64 },
    #[error("no longer needed")]
    Abandoned,
}

pub struct MemoryBudget {
    usage: Mutex<MemoryUsage>,
    freed: Condvar,
    /// Bytes only urgent reservations may take.
    urgent_reserve: u64,
    /// Urgent reservations waiting for room: others wait behind them.
    urgent_waiting: AtomicUsize,
    /// How many times held bytes went back (counted under `usage`'s lock).
    releases: AtomicU64,
    /// Callers blocked in [`MemoryBudget::reserve`] (past their first try)
    /// or [`MemoryBudget::wait_release`]: tests wait for these instead of
    /// sleeping.
    blocked: AtomicUsize,
}

/// Bytes held until dropped.
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
    purpose: Purpose,
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The budget it holds bytes of.
    pub fn budget(&self) -> Arc<MemoryBudget> {
        self.budget.clone()
    }

    /// Holds `bytes` from now on: always where that is less, where they
    /// fit (as [`MemoryBudget::try_reserve`]) where it is more; false, the
    /// reservation unchanged, where they do not.
    pub fn resize(&mut self, bytes: u64) -> bool {
        let budget = self.budget.clone();
        let mut u = budget.usage.lock().unwrap();
        if bytes > self.bytes {
            if !budget.fits(&u, bytes - self.bytes, 0, false, false) {
                return false;
            }
            u.add(self.purpose, bytes - self.bytes);
        } else {
            u.sub(self.purpose, self.bytes - bytes);
            budget.released(&u);
        }
        self.bytes = bytes;
        true
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut u = self.budget.usage.lock().unwrap();
        u.sub(self.purpose, self.bytes);
        self.budget.released(&u);
    }
}

impl MemoryUsage {
    fn add(&mut self, purpose: Purpose, bytes: u64) {
        self.used_bytes += bytes;
        self.peak_bytes = self.peak_bytes.max(self.used_bytes);
        *self.of(purpose) += bytes;
        self.srs_peak_bytes = self.srs_peak_bytes.max(self.srs_bytes);
    }

    fn sub(&mut self, purpose: Purpose, bytes: u64) {
        self.used_bytes -= bytes;
        *self.of(purpose) -= bytes;
    }

    fn of(&mut self, purpose: Purpose) -> &mut u64 {
        match purpose {
            Purpose::Srs => &mut self.srs_bytes,
            Purpose::Partition => &mut self.partition_bytes,
            Purpose::Pce => &mut self.pce_bytes,
        }
    }
}

/// How often a blocked reservation re-checks its abandon condition and
/// retries the pressure hook (idle SRS entries become evictable over time).
const RECHECK: Duration = Duration::from_millis(50);

impl MemoryBudget {
    pub fn new(budget_bytes: u64) -> Arc<Self> {
        Self::with_urgent_reserve(budget_bytes, 0)
    }

    /// A budget whose last `urgent_reserve` bytes (at most an eighth of
    /// it: a small budget stays mostly for normal work) only urgent
    /// reservations may take.
    pub fn with_urgent_reserve(budget_bytes: u64, urgent_reserve: u64) -> Arc<Self> {
        Arc::new(Self {
            usage: Mutex::new(MemoryUsage { budget_bytes, ..Default::default() }),
            freed: Condvar::new(),
            urgent_reserve: urgent_reserve.min(budget_bytes / 8),
            urgent_waiting: AtomicUsize::new(0),
            releases: AtomicU64::new(0),
            blocked: AtomicUsize::new(0),
        })
    }

    /// The bytes only urgent reservations may take.
    pub fn urgent_reserve(&self) -> u64 {
        self.urgent_reserve
    }

    pub fn usage(&self) -> MemoryUsage {
        *self.usage.lock().unwrap()
    }

    /// How many claims of `bytes` the budget holds at once beside the SRS
    /// and the PCE it holds now and the urgent reserve (those held now
    /// counted in), at least one: how many of a circuit's partitions
    /// synthesize at a time, when nothing else limits them.
    pub fn claims_at_once(&self, bytes: u64) -> usize {
        let u = self.usage();
        let room = u.budget_bytes.saturating_sub(self.urgent_reserve).saturating_sub(u.srs_bytes + u.pce_bytes);
        let n = room.checked_div(bytes).unwrap_or(u64::MAX);
        usize::try_from(n).unwrap_or(usize::MAX).max(1)
    }

    /// How many times held bytes have gone back so far (a reservation
    /// dropped or shrunk): the mark for [`Self::wait_release`].
    pub fn releases(&self) -> u64 {
        self.releases.load(Ordering::SeqCst)
    }

    /// Waits until bytes go back after the mark `seen` (from
    /// [`Self::releases`]) or `timeout` passes; whether they did.
    pub fn wait_release(&self, seen: u64, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let _blocked = Blocked::new(self);
        let mut u = self.usage.lock().unwrap();
        while self.releases() == seen {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            u = self.freed.wait_timeout(u, left).unwrap().0;
        }
        true
    }

    /// Counts a release (with `usage`'s lock held, so no waiter misses it)
    /// and wakes the waiters.
    fn released(&self, _locked: &MemoryUsage) {
        self.releases.fetch_add(1, Ordering::SeqCst);
        self.freed.notify_all();
    }

    /// `bytes` now if they fit beside the urgent reserve, else None (for
    /// one-off claims such as a recorded PCE, which are not retried: they
    /// do not wait behind urgent reservations).
    pub fn try_reserve(self: &Arc<Self>, bytes: u64, purpose: Purpose) -> Option<Reservation> {
        self.try_take(bytes, 0, purpose, false, false)
    }

    /// How far a claim may fill the budget: all of it for an urgent one;
    /// else up to the urgent reserve, except that a claim that could fit
    /// only with the reserve (`pinned`: the caller's own held bytes) gets
    /// it once nothing else is held, so the reserve never makes a job
    /// impossible.
    fn limit(&self, u: &MemoryUsage, bytes: u64, pinned: u64, urgent: bool) -> u64 {
        if urgent {
            return u.budget_bytes;
        }
        u.budget_bytes.saturating_sub(self.urgent_reserve).max((bytes + pinned).min(u.budget_bytes))
    }

    /// Whether the claim may be granted now. `queued`: a normal claim of a
    /// [`Self::reserve`] loop, which lets waiting urgent claims go first.
    fn fits(&self, u: &MemoryUsage, bytes: u64, pinned: u64, urgent: bool, queued: bool) -> bool {
        let behind_urgent = !urgent && queued && self.urgent_waiting.load(Ordering::SeqCst) > 0;
        !behind_urgent && u.used_bytes + bytes <= self.limit(u, bytes, pinned, urgent)
    }

    fn try_take(self: &Arc<Self>, bytes: u64, pinned: u64, purpose: Purpose, urgent: bool, queued: bool) -> Option<Reservation> {
        let mut u = self.usage.lock().unwrap();
        if !self.fits(&u, bytes, pinned, urgent, queued) {
            return None;
        }
        u.add(purpose, bytes);
        Some(Reservation { budget: self.clone(), bytes, purpose })
    }

    /// Blocks until `bytes` fit. `pinned` is memory the caller itself keeps
    /// held while waiting (its SRS): if `bytes + pinned` exceed the budget
    /// the wait could never end, so that is an error at once.
    /// `on_pressure(missing)` may free memory (it runs without the
    /// budget's lock); `abandon()` true gives up. `urgent`: of an urgent
    /// job (the reserve is open to it, and others wait while it waits).
    pub fn reserve(
        self: &Arc<Self>,
        bytes: u64,
        pinned: u64,
        purpose: Purpose,
        urgent: bool,
        mut on_pressure: impl FnMut(u64),
        abandon: impl Fn() -> bool,
    ) -> Result<Reservation, ReserveError> {
        let budget = self.usage.lock().unwrap().budget_bytes;
        if bytes + pinned > budget {
            return Err(ReserveError::TooLarge { need: bytes, pinned, budget });
        }
        if let Some(r) = self.try_take(bytes, pinned, purpose, urgent, true) {
            return Ok(r);
        }
        let _waiting = urgent.then(|| UrgentWaiting::new(self));
        let _blocked = Blocked::new(self);
        loop {
            if let Some(r) = self.try_take(bytes, pinned, purpose, urgent, true) {
                return Ok(r);
            }
            if abandon() {
                return Err(ReserveError::Abandoned);
            }
            let missing = {
                let u = self.usage.lock().unwrap();
                (u.used_bytes + bytes).saturating_sub(self.limit(&u, bytes, pinned, urgent))
            };
            on_pressure(missing);
            let u = self.usage.lock().unwrap();
            if !self.fits(&u, bytes, pinned, urgent, true) {
                drop(self.freed.wait_timeout(u, RECHECK).unwrap());
            }
        }
    }
}

/// Counts an urgent reservation as waiting while it lives.
struct UrgentWaiting<'a>(&'a MemoryBudget);

impl<'a> UrgentWaiting<'a> {
    fn new(budget: &'a MemoryBudget) -> Self {
        budget.urgent_waiting.fetch_add(1, Ordering::SeqCst);
        Self(budget)
    }
}

impl Drop for UrgentWaiting<'_> {
    fn drop(&mut self) {
        self.0.urgent_waiting.fetch_sub(1, Ordering::SeqCst);
        // Those that waited behind it try again.
        self.0.freed.notify_all();
    }
}

/// Counts a caller as blocked while it lives.
struct Blocked<'a>(&'a MemoryBudget);

impl<'a> Blocked<'a> {
    fn new(budget: &'a MemoryBudget) -> Self {
        budget.blocked.fetch_add(1, Ordering::SeqCst);
        Self(budget)
    }
}

impl Drop for Blocked<'_> {
    fn drop(&mut self) {
        self.0.blocked.fetch_sub(1, Ordering::SeqCst);
    }
}

/// MemTotal from /proc/meminfo, in bytes.
pub fn mem_total_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_total(&text)
}

fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The budget in bytes for a config: explicit, or MemTotal − safety_margin.
pub fn resolve_budget(cfg: &MemoryConfig) -> Result<u64, String> {
    match cfg.total_budget {
        TotalBudget::Bytes(b) => Ok(b),
        TotalBudget::Auto => {
            let total = mem_total_bytes().ok_or("memory.total_budget = \"auto\" needs /proc/meminfo; set an explicit size")?;
            let margin = cfg.safety_margin.0;
            if margin >= total {
                return Err(format!(
                    "memory.safety_margin ({}) is not below this machine's memory ({}): nothing would be left",
                    format_size(margin),
                    format_size(total)
                ));
            }
            Ok(total - margin)
        }
    }
}

/// Host bytes one synthesized partition of this SRS's circuit holds until
/// it is proved: a, b, c (one Fr per constraint, rounded up to the domain
/// as vectors grow), the assignments, and the prover's working copies of
/// a, b, c for the H term. Derived from the SRS shape because the
/// constraint count is known before synthesis only through it.
pub fn partition_bytes_estimate(srs: &dyn KeyShape) -> u64 {
    let fr = 32u64;
    let domain = srs.counts().h as u64 + 1;
    let vars = (srs.vk().ic.len() + srs.counts().l) as u64;
    let abc = 3 * domain * fr;
    2 * abc + vars * fr + vars / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits until `n` callers are blocked on `b` (their first try failed):
    /// the point a test asserts from.
    fn wait_blocked(b: &MemoryBudget, n: usize) {
        let t = std::time::Instant::now();
        while b.blocked.load(Ordering::SeqCst) < n {
            assert!(t.elapsed() < Duration::from_secs(60), "never {n} blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn meminfo_parse() {
        assert_eq!(parse_mem_total("MemTotal:       16384 kB\nMemFree: 1 kB\n"), Some(16384 * 1024));
        assert_eq!(parse_mem_total("nothing"), None);
    }

    #[test]
    fn claims_at_once_count_what_the_srs_pce_and_reserve_leave() {
        let b = MemoryBudget::with_urgent_reserve(100, 10);
        assert_eq!(b.claims_at_once(20), 4, "90 beside the reserve");
        let _srs = b.try_reserve(30, Purpose::Srs).unwrap();
        let _pce = b.try_reserve(10, Purpose::Pce).unwrap();
        let held = b.try_reserve(20, Purpose::Partition).unwrap();
        assert_eq!(b.claims_at_once(20), 2, "the partition held now counted in");
        drop(held);
        assert_eq!(b.claims_at_once(20), 2);
        assert_eq!(b.claims_at_once(60), 1, "never none: a unit that holds its claim runs");
        assert_eq!(b.claims_at_once(0), usize::MAX);
    }

    #[test]
    fn reservations_account_and_release() {
        let b = MemoryBudget::new(100);
        let r1 = b.try_reserve(60, Purpose::Srs).unwrap();
        assert!(b.try_reserve(50, Purpose::Partition).is_none());
        let r2 = b.try_reserve(40, Purpose::Partition).unwrap();
        assert_eq!(b.usage().used_bytes, 100);
        drop(r1);
        assert_eq!(
            b.usage(),
            MemoryUsage {
                budget_bytes: 100,
                used_bytes: 40,
                peak_bytes: 100,
                srs_bytes: 0,
                srs_peak_bytes: 60,
                partition_bytes: 40,
                pce_bytes: 0
            }
        );
        drop(r2);
        assert_eq!(b.usage().used_bytes, 0);
        assert!(matches!(b.reserve(101, 0, Purpose::Partition, false, |_| {}, || false), Err(ReserveError::TooLarge { .. })));
    }

    /// A waiter wakes at a release after its mark (a drop, or a resize to
    /// less) and not at one before it; with none, it gives up at its
    /// timeout.
    #[test]
    fn wait_release_sees_releases_after_its_mark() {
        let b = MemoryBudget::new(100);
        let mut r = b.try_reserve(60, Purpose::Partition).unwrap();
        let seen = b.releases();
        assert!(!b.wait_release(seen, Duration::from_millis(20)), "nothing went back");
        assert!(r.resize(40));
        assert!(b.wait_release(seen, Duration::ZERO), "a shrink is a release");
        let seen = b.releases();
        assert!(r.resize(50), "growing is not a release");
        assert_eq!(b.releases(), seen);
        let b2 = b.clone();
        let t = std::thread::spawn(move || b2.wait_release(seen, Duration::from_secs(60)));
        wait_blocked(&b, 1);
        drop(r);
        assert!(t.join().unwrap(), "woken by the drop");
        assert_eq!(b.usage().used_bytes, 0);
    }

    #[test]
    fn blocked_reservation_waits_for_release_or_abandons() {
        let b = MemoryBudget::new(10);
        let held = b.try_reserve(10, Purpose::Partition).unwrap();
        assert_eq!(b.reserve(5, 0, Purpose::Partition, false, |_| {}, || true).err(), Some(ReserveError::Abandoned));
        let b2 = b.clone();
        let t = std::thread::spawn(move || b2.reserve(5, 0, Purpose::Partition, false, |_| {}, || false).map(|r| r.bytes()));
        wait_blocked(&b, 1);
        assert!(!t.is_finished(), "no room until the held bytes go back");
        drop(held);
        assert_eq!(t.join().unwrap(), Ok(5));
    }

    #[test]
    fn urgent_reserve_and_urgent_reservations_go_first() {
        let b = MemoryBudget::with_urgent_reserve(160, 20);
        let normal = b.try_reserve(130, Purpose::Partition).unwrap();
        assert!(b.try_reserve(20, Purpose::Partition).is_none(), "the last 20 bytes are the urgent reserve");
        let urgent = b.reserve(20, 0, Purpose::Partition, true, |_| {}, || false).unwrap();
        drop(urgent);
        // An urgent reservation waiting for room holds the others back.
        let b2 = b.clone();
        let t = std::thread::spawn(move || b2.reserve(100, 0, Purpose::Partition, true, |_| {}, || false).map(|r| r.bytes()));
        while b.urgent_waiting.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let b3 = b.clone();
        let queued = std::thread::spawn(move || b3.reserve(10, 0, Purpose::Partition, false, |_| {}, || false).map(|r| r.bytes()));
        // Both blocked: the normal one's 10 bytes fit beside `normal` (140
        // of the 140 outside the reserve), so only the urgent one holds it.
        wait_blocked(&b, 2);
        assert!(!queued.is_finished(), "a normal reservation waits behind an urgent one");
        assert_eq!(b.usage().used_bytes, 130);
        drop(normal);
        assert_eq!(t.join().unwrap(), Ok(100));
        assert_eq!(queued.join().unwrap(), Ok(10));
        // A normal reservation that fits only with the reserve is not
        // refused for good: it gets it when nothing else is held.
        assert_eq!(b.reserve(155, 0, Purpose::Partition, false, |_| {}, || false).map(|r| r.bytes()), Ok(155));
        assert!(b.try_reserve(161, Purpose::Pce).is_none(), "never past the budget");
        assert_eq!(MemoryBudget::with_urgent_reserve(80, 20).urgent_reserve, 10, "at most an eighth of the budget");
    }
}
