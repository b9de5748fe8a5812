//! The per-device interlock: `mem_mtx` guards VRAM reservation and
//! pre-staging (short), `compute_mtx` guards kernel execution (long), so
//! one worker pre-stages its next partition while another computes.
//! Both go to a worker proving urgent work before the others waiting for
//! them ([`UrgentFirstLock`]): an urgent partition waits for at most the
//! pre-stage and the kernel running, never for a line of normal ones.
//!
//! VRAM is accounted by the process itself ([`VramBudget`], measured once
//! at start): device-global queries or synchronizing frees under `mem_mtx`
//! would wait for the other worker's kernels and serialize everything.
//! The last `gpus.urgent_vram_reserve` bytes of each budget are urgent
//! work's alone: a normal partition's grant (the fallback takes all that
//! is free) never leaves an urgent one without room for its working set.
//! An urgent partition whose whole working set fits an urgent reservation
//! and is no larger than the reserve (a WinningPoSt's) computes beside the
//! call holding `compute_mtx`, not after it, one urgent call at a time per
//! device (`urgent_lane`; see [`super::prover_worker`]).

use serde::Serialize;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct VramState {
    used: u64,
    peak: u64,
}

/// Device memory the process has handed out, against a fixed total whose
/// last `urgent_reserve` bytes only urgent reservations may take.
#[derive(Debug)]
pub struct VramBudget {
    total: u64,
    urgent_reserve: u64,
    state: Mutex<VramState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct VramUsage {
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub peak_bytes: u64,
}

impl VramUsage {
    /// The budget tracked, or None for a device without memory of its own:
    /// the CPU backend's one device, whose budget is unlimited (u64::MAX)
    /// so that nothing waits for it.
    pub fn budget(&self) -> Option<u64> {
        (self.total_bytes != u64::MAX).then_some(self.total_bytes)
    }
}

/// VRAM held until dropped.
#[derive(Debug)]
pub struct VramReservation {
    budget: Arc<VramBudget>,
    bytes: u64,
}

impl VramReservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for VramReservation {
    fn drop(&mut self) {
        self.budget.state.lock().unwrap().used -= self.bytes;
    }
}

impl VramBudget {
    /// A budget of `total` bytes with no urgent reserve.
    pub fn new(total: u64) -> Arc<Self> {
        Self::with_urgent_reserve(total, 0)
    }

    /// A budget of `total` bytes whose last `urgent_reserve` (at most an
    /// eighth of it, as the host budget's `memory.urgent_reserve`) only
    /// urgent reservations may take.
    pub fn with_urgent_reserve(total: u64, urgent_reserve: u64) -> Arc<Self> {
        Arc::new(Self { total, urgent_reserve: urgent_reserve.min(total / 8), state: Mutex::default() })
    }

    /// The bytes kept for urgent reservations.
    pub fn urgent_reserve(&self) -> u64 {
        self.urgent_reserve
    }

    /// The budget less the urgent reserve: all that normal reservations
    /// may take, and so the total that the rules deciding what a device
    /// keeps beside normal working sets (a resident SRS, matrices) plan
    /// with.
    pub fn normal_total(&self) -> u64 {
        self.total - self.urgent_reserve
    }

    pub fn usage(&self) -> VramUsage {
        let s = self.state.lock().unwrap();
        VramUsage { total_bytes: self.total, used_bytes: s.used, peak_bytes: s.peak }
    }

    fn grant(self: &Arc<Self>, s: &mut VramState, bytes: u64) -> VramReservation {
        s.used += bytes;
        s.peak = s.peak.max(s.used);
        VramReservation { budget: self.clone(), bytes }
    }

    /// Bytes a normal reservation may take now (the urgent reserve is
    /// never free to it).
    pub fn free(&self) -> u64 {
        self.normal_total().saturating_sub(self.state.lock().unwrap().used)
    }

    /// All of `bytes`, or None when they do not fit now beside the urgent
    /// reserve.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<VramReservation> {
        self.try_reserve_within(bytes, self.normal_total())
    }

    /// All of `bytes` for urgent work, which may take the urgent reserve
    /// too, or None when they do not fit now.
    pub fn try_reserve_urgent(self: &Arc<Self>, bytes: u64) -> Option<VramReservation> {
        self.try_reserve_within(bytes, self.total)
    }

    fn try_reserve_within(self: &Arc<Self>, bytes: u64, limit: u64) -> Option<VramReservation> {
        let mut s = self.state.lock().unwrap();
        (s.used.saturating_add(bytes) <= limit).then(|| self.grant(&mut s, bytes))
    }

    /// As much of `bytes` as is free to a normal reservation (the fallback
    /// path computes within it).
    pub fn reserve_up_to(self: &Arc<Self>, bytes: u64) -> VramReservation {
        let mut s = self.state.lock().unwrap();
        let n = bytes.min(self.normal_total().saturating_sub(s.used));
        self.grant(&mut s, n)
    }
}

/// Whether a device proves: in service; out of it (lost while another
/// remained); or lost as the last one, its workers proving on the CPU
/// (`gpus.cpu_fallback`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Service {
    InService = 0,
    OutOfService = 1,
    OnCpu = 2,
}

/// The two locks and the VRAM budget of one device, the lane of its
/// urgent calls computing beside `compute_mtx`, and its [`Service`].
#[derive(Debug)]
pub struct DeviceLocks {
    pub ordinal: u32,
    pub name: String,
    mem_mtx: UrgentFirstLock,
    compute_mtx: UrgentFirstLock,
    /// Held by an urgent call computing beside the holder of
    /// `compute_mtx`: one such call at a time, so the device runs at most
    /// two computes at once (see [`super::prover_worker`]).
    urgent_lane: Mutex<()>,
    pub vram: Arc<VramBudget>,
    service: AtomicU8,
    /// Synthesized units its workers have taken and not finished with
    /// (waiting for a lock, pre-staging, proving): what the prover
    /// workers weigh devices by ([`super::prover_worker`]).
    units_held: AtomicUsize,
}

/// A poisoned lock only means a worker panicked while holding it; the
/// `()` inside is still fine, and the panic already failed its job.
fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DeviceLocks {
    /// A device with a VRAM budget of `vram_total` bytes and no urgent
    /// reserve in it.
    pub fn new(ordinal: u32, name: String, vram_total: u64) -> Arc<Self> {
        Self::with_urgent_vram_reserve(ordinal, name, vram_total, 0)
    }

    /// A device whose VRAM budget of `vram_total` bytes keeps its last
    /// `urgent_vram_reserve` for urgent work ([`VramBudget::with_urgent_reserve`]).
    pub fn with_urgent_vram_reserve(ordinal: u32, name: String, vram_total: u64, urgent_vram_reserve: u64) -> Arc<Self> {
        Arc::new(Self {
            ordinal,
            name,
            mem_mtx: UrgentFirstLock::default(),
            compute_mtx: UrgentFirstLock::default(),
            urgent_lane: Mutex::new(()),
            vram: VramBudget::with_urgent_reserve(vram_total, urgent_vram_reserve),
            service: AtomicU8::new(Service::InService as u8),
            units_held: AtomicUsize::new(0),
        })
    }

    /// Units its workers hold now.
    pub fn units_held(&self) -> usize {
        self.units_held.load(Ordering::SeqCst)
    }

    /// One more unit held (taken from the queue).
    pub fn hold_unit(&self) {
        self.units_held.fetch_add(1, Ordering::SeqCst);
    }

    /// One unit fewer held (proved, failed, or given back to the queue).
    pub fn release_unit(&self) {
        self.units_held.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn service(&self) -> Service {
        match self.service.load(Ordering::SeqCst) {
            0 => Service::InService,
            1 => Service::OutOfService,
            _ => Service::OnCpu,
        }
    }

    /// Its GPU proves.
    pub fn in_service(&self) -> bool {
        self.service() == Service::InService
    }

    /// Its workers take work (on the GPU, or on the CPU after losing it).
    pub fn serving(&self) -> bool {
        self.service() != Service::OutOfService
    }

    /// `urgent`: for a partition of an urgent job, which goes first.
    pub fn lock_mem(&self, urgent: bool) -> UrgentFirstGuard<'_> {
        self.mem_mtx.lock(urgent)
    }

    /// `urgent`: for a partition of an urgent job, which goes first.
    pub fn lock_compute(&self, urgent: bool) -> UrgentFirstGuard<'_> {
        self.compute_mtx.lock(urgent)
    }

    /// For an urgent call computing beside the holder of the compute lock
    /// (its whole working set in an urgent reservation): waits for the
    /// urgent call computing so, if any, only.
    pub fn lock_urgent_lane(&self) -> MutexGuard<'_, ()> {
        lock(&self.urgent_lane)
    }
}

/// A mutex whose urgent waiters go before the others.
#[derive(Debug, Default)]
pub struct UrgentFirstLock {
    state: Mutex<LockState>,
    released: Condvar,
}

#[derive(Debug, Default)]
struct LockState {
    held: bool,
    urgent_waiting: usize,
    /// Normal callers in [`UrgentFirstLock::lock`] (tests wait for them).
    normal_waiting: usize,
}

impl LockState {
    fn waiting(&mut self, urgent: bool) -> &mut usize {
        if urgent {
            &mut self.urgent_waiting
        } else {
            &mut self.normal_waiting
        }
    }
}

/// Holds [`UrgentFirstLock`] until dropped (also when a panic unwinds).
pub struct UrgentFirstGuard<'a>(&'a UrgentFirstLock);

impl UrgentFirstLock {
    fn state(&self) -> MutexGuard<'_, LockState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn lock(&self, urgent: bool) -> UrgentFirstGuard<'_> {
        let mut s = self.state();
        *s.waiting(urgent) += 1;
        while s.held || (!urgent && s.urgent_waiting > 0) {
            s = self.released.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        *s.waiting(urgent) -= 1;
        s.held = true;
        UrgentFirstGuard(self)
    }
}

impl Drop for UrgentFirstGuard<'_> {
    fn drop(&mut self) {
        self.0.state().held = false;
        self.0.released.notify_all();
    }
}

/// What became of a lost device ([`after_loss`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterLoss {
    /// Out of service; its workers stop and the others take its work.
    ToOthers,
    /// It was the last in service: its workers prove on the CPU.
    ToCpu,
    /// It was the last in service and there is no CPU fallback: it stays,
    /// its errors fail their jobs, and the engine keeps taking work.
    Stays,
}

/// Takes `lost` out of service where another of `devices` stays in it,
/// else moves it to the CPU where `cpu_fallback`, else leaves it.
pub fn after_loss(devices: &[Arc<DeviceLocks>], lost: &DeviceLocks, cpu_fallback: bool) -> AfterLoss {
    // One decision at a time, so two devices lost together cannot both
    // leave, each counting the other as in service.
    static DECIDING: Mutex<()> = Mutex::new(());
    let _one = lock(&DECIDING);
    if lost.service() != Service::InService {
        // Decided already (another of its workers, the same loss).
        return if lost.serving() { AfterLoss::ToCpu } else { AfterLoss::ToOthers };
    }
    let others = devices.iter().any(|d| d.ordinal != lost.ordinal && d.in_service());
    let (service, after) = match (others, cpu_fallback) {
        (true, _) => (Service::OutOfService, AfterLoss::ToOthers),
        (false, true) => (Service::OnCpu, AfterLoss::ToCpu),
        (false, false) => return AfterLoss::Stays,
    };
    lost.service.store(service as u8, Ordering::SeqCst);
    after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vram_accounting() {
        let v = VramBudget::new(100);
        let a = v.try_reserve(70).unwrap();
        assert!(v.try_reserve(40).is_none());
        let b = v.reserve_up_to(40);
        assert_eq!(b.bytes(), 30);
        assert_eq!(v.usage(), VramUsage { total_bytes: 100, used_bytes: 100, peak_bytes: 100 });
        drop((a, b));
        assert_eq!(v.usage().used_bytes, 0);
    }

    #[test]
    fn normal_reservations_never_take_the_urgent_reserve() {
        let v = VramBudget::with_urgent_reserve(160, 20);
        assert_eq!((v.urgent_reserve(), v.normal_total(), v.free()), (20, 140, 140));
        assert!(v.try_reserve(141).is_none(), "a normal reservation over the budget less the reserve");
        let a = v.try_reserve(100).unwrap();
        assert_eq!(v.free(), 40);
        // The fallback's grant takes all that is free to it, not the reserve.
        let b = v.reserve_up_to(u64::MAX);
        assert_eq!((b.bytes(), v.free()), (40, 0));
        assert!(v.try_reserve(1).is_none());
        // Urgent work takes the reserve.
        let u = v.try_reserve_urgent(15).unwrap();
        assert!(v.try_reserve_urgent(6).is_none(), "past the whole budget");
        assert_eq!((v.free(), v.reserve_up_to(10).bytes()), (0, 0), "beside an urgent reservation in the reserve");
        assert_eq!(v.usage(), VramUsage { total_bytes: 160, used_bytes: 155, peak_bytes: 155 });
        drop(a);
        // Freed normal room is free to both; urgent work may take all of it.
        assert_eq!(v.free(), 85);
        let big = v.try_reserve_urgent(105).unwrap();
        assert_eq!((v.usage().used_bytes, v.free()), (160, 0));
        drop((b, u, big));
        assert_eq!((v.usage().used_bytes, v.free()), (0, 140));
    }

    #[test]
    fn urgent_vram_reserve_is_at_most_an_eighth_of_the_budget() {
        assert_eq!(VramBudget::with_urgent_reserve(80, 20).urgent_reserve(), 10);
        assert_eq!(VramBudget::with_urgent_reserve(80, 0).urgent_reserve(), 0);
        assert_eq!(VramBudget::new(80).free(), 80, "none without one");
        // The CPU stand-in's unlimited budget keeps the reserve asked for.
        let unlimited = VramBudget::with_urgent_reserve(u64::MAX, 1 << 30);
        assert_eq!(unlimited.usage().budget(), None);
        assert!(unlimited.try_reserve(u64::MAX - (1 << 30)).is_some());
    }

    #[test]
    fn urgent_first_lock_lets_urgent_waiters_go_first() {
        let lock = Arc::new(UrgentFirstLock::default());
        let order = Arc::new(Mutex::new(Vec::new()));
        let held = lock.lock(false);
        let waiter = |urgent: bool| {
            let (lock, order) = (lock.clone(), order.clone());
            std::thread::spawn(move || {
                let _g = lock.lock(urgent);
                order.lock().unwrap().push(urgent);
            })
        };
        // Each waiter counted in the lock's state finds it held, so blocks.
        let blocked = |urgent: bool| {
            let t = std::time::Instant::now();
            while *lock.state().waiting(urgent) == 0 {
                assert!(t.elapsed() < std::time::Duration::from_secs(60), "the waiter never reached the lock");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        let normal = waiter(false);
        blocked(false);
        let urgent = waiter(true);
        blocked(true);
        drop(held);
        normal.join().unwrap();
        urgent.join().unwrap();
        assert_eq!(*order.lock().unwrap(), vec![true, false], "the urgent waiter, though later, went first");
    }
}
