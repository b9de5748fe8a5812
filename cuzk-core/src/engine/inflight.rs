//! Batches dispatched and not yet fully proved, by circuit. The
//! dispatcher consults it before starting a batch of another circuit: two
//! batches whose SRS entries are both pinned can starve each other of
//! memory, so a new circuit runs alongside others only when its SRS and a
//! partition fit next to the SRS entries they pin. An urgent batch
//! waiting so holds the main dispatcher's new batches back
//! ([`InflightBatches::hold_new_batches`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

#[derive(Default)]
pub struct InflightBatches {
    by_circuit: Mutex<HashMap<String, usize>>,
    changed: Condvar,
    /// Holds on the main dispatcher's new batches (urgent batches waiting
    /// for the others to finish).
    holds: AtomicUsize,
}

/// Holds the main dispatcher's new batches back while it lives.
pub struct HoldGuard<'a>(&'a InflightBatches);

impl Drop for HoldGuard<'_> {
    fn drop(&mut self) {
        let _m = self.0.by_circuit.lock().unwrap();
        self.0.holds.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_all();
    }
}

/// Registered while its batch lives.
pub struct InflightGuard {
    registry: Arc<InflightBatches>,
    circuit_id: String,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        let mut m = self.registry.by_circuit.lock().unwrap();
        let n = m.get_mut(&self.circuit_id).expect("registered");
        *n -= 1;
        if *n == 0 {
            m.remove(&self.circuit_id);
        }
        self.registry.changed.notify_all();
    }
}

impl InflightBatches {
    pub fn enter(self: &Arc<Self>, circuit_id: &str) -> InflightGuard {
        *self.by_circuit.lock().unwrap().entry(circuit_id.to_string()).or_default() += 1;
        InflightGuard { registry: self.clone(), circuit_id: circuit_id.to_string() }
    }

    /// The circuits other than `circuit_id` with batches in flight.
    pub fn other_circuits(&self, circuit_id: &str) -> Vec<String> {
        self.by_circuit.lock().unwrap().keys().filter(|k| *k != circuit_id).cloned().collect()
    }

    pub fn hold_new_batches(&self) -> HoldGuard<'_> {
        self.holds.fetch_add(1, Ordering::SeqCst);
        HoldGuard(self)
    }

    /// Whether a [`HoldGuard`] lives.
    pub fn held(&self) -> bool {
        self.holds.load(Ordering::SeqCst) > 0
    }

    /// Waits until a batch ends, a hold ends, or `timeout` passes.
    pub fn wait(&self, timeout: Duration) {
        let m = self.by_circuit.lock().unwrap();
        drop(self.changed.wait_timeout(m, timeout).unwrap());
    }
}
