//! VRAM accounting: the budget is measured once at start (free memory, or a
//! configured limit to simulate a smaller card) and the process tracks its
//! own reservations, so no device-synchronizing query (cudaMemGetInfo) is
//! needed on hot paths.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::device::DeviceInfo;
use crate::error::Result;

pub struct VramBudget {
    device: i32,
    total: u64,
    used: AtomicU64,
}

impl VramBudget {
    /// Measures free memory now, less `headroom` bytes; `limit` caps it.
    pub fn measure(device: i32, headroom: u64, limit: Option<u64>) -> Result<Self> {
        let free = DeviceInfo::query(device)?.free_mem_bytes.saturating_sub(headroom);
        Ok(Self::with_total(device, limit.map_or(free, |l| l.min(free))))
    }

    /// A budget of exactly `total` bytes (tests, simulated cards).
    pub fn with_total(device: i32, total: u64) -> Self {
        VramBudget { device, total, used: AtomicU64::new(0) }
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn available(&self) -> u64 {
        self.total - self.used.load(Ordering::Acquire)
    }

    /// Reserves `bytes` if they fit; released when the reservation drops.
    pub fn try_reserve(&self, bytes: u64) -> Option<VramReservation<'_>> {
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            let next = used.checked_add(bytes).filter(|&n| n <= self.total)?;
            match self.used.compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(VramReservation { budget: self, bytes }),
                Err(now) => used = now,
            }
        }
    }
}

pub struct VramReservation<'a> {
    budget: &'a VramBudget,
    bytes: u64,
}

impl VramReservation<'_> {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for VramReservation<'_> {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_fit_the_budget_and_are_returned() {
        let b = VramBudget::with_total(0, 100);
        let r1 = b.try_reserve(60).unwrap();
        assert!(b.try_reserve(50).is_none());
        let r2 = b.try_reserve(40).unwrap();
        assert_eq!(b.available(), 0);
        drop(r1);
        assert_eq!(b.available(), 60);
        drop(r2);
        assert_eq!(b.available(), 100);
    }
}
