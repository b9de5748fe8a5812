//! The per-device interlock: `mem_mtx` guards VRAM reservation and
//! pre-staging (short), `compute_mtx` guards kernel execution (long), so
//! one worker pre-stages its next partition while another computes.
//!
//! VRAM is accounted by the process itself ([`VramBudget`], measured once
//! at start): device-global queries or synchronizing frees under `mem_mtx`
//! would wait for the other worker's kernels and serialize everything.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct VramState {
    used: u64,
    peak: u64,
}

/// Device memory the process has handed out, against a fixed total.
#[derive(Debug)]
pub struct VramBudget {
    total: u64,
    state: Mutex<VramState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct VramUsage {
    pub total_bytes: u64,
    pub used_bytes: u64,
    pub peak_bytes: u64,
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
    pub fn new(total: u64) -> Arc<Self> {
        Arc::new(Self { total, state: Mutex::default() })
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

    /// Bytes not handed out now.
    pub fn free(&self) -> u64 {
        self.total - self.state.lock().unwrap().used
    }

    /// All of `bytes`, or None when they do not fit now.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<VramReservation> {
        let mut s = self.state.lock().unwrap();
        (s.used + bytes <= self.total).then(|| self.grant(&mut s, bytes))
    }

    /// As much of `bytes` as is free (the fallback path computes within it).
    pub fn reserve_up_to(self: &Arc<Self>, bytes: u64) -> VramReservation {
        let mut s = self.state.lock().unwrap();
        let n = bytes.min(self.total - s.used);
        self.grant(&mut s, n)
    }
}

/// The two locks and the VRAM budget of one device, and whether it is in
/// service (a device that failed is taken out while another remains).
#[derive(Debug)]
pub struct DeviceLocks {
    pub ordinal: u32,
    pub name: String,
    mem_mtx: Mutex<()>,
    compute_mtx: Mutex<()>,
    pub vram: Arc<VramBudget>,
    out_of_service: AtomicBool,
}

/// A poisoned lock only means a worker panicked while holding it; the
/// `()` inside is still fine, and the panic already failed its job.
fn lock(m: &Mutex<()>) -> MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DeviceLocks {
    pub fn new(ordinal: u32, name: String, vram_total: u64) -> Arc<Self> {
        Arc::new(Self {
            ordinal,
            name,
            mem_mtx: Mutex::new(()),
            compute_mtx: Mutex::new(()),
            vram: VramBudget::new(vram_total),
            out_of_service: AtomicBool::new(false),
        })
    }

    pub fn in_service(&self) -> bool {
        !self.out_of_service.load(Ordering::SeqCst)
    }

    pub fn lock_mem(&self) -> MutexGuard<'_, ()> {
        lock(&self.mem_mtx)
    }

    pub fn lock_compute(&self) -> MutexGuard<'_, ()> {
        lock(&self.compute_mtx)
    }
}

/// Takes `failed` out of service where another of `devices` stays in it
/// (then its workers stop and their units go to the others); returns
/// whether it did. The last device in service stays: its errors fail
/// their jobs, and the engine keeps taking work.
pub fn take_out_of_service(devices: &[Arc<DeviceLocks>], failed: &DeviceLocks) -> bool {
    // One decision at a time, so two devices failing together cannot both
    // leave, each counting the other as in service.
    static DECIDING: Mutex<()> = Mutex::new(());
    let _one = lock(&DECIDING);
    let others = devices.iter().any(|d| d.ordinal != failed.ordinal && d.in_service());
    if others && failed.in_service() {
        failed.out_of_service.store(true, Ordering::SeqCst);
    }
    !failed.in_service()
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
}
