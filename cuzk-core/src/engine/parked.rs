//! Batches parked by a dispatcher while their SRS loads on a thread of its
//! own, so that a slow load (a 32 GiB PoRep's `.params` takes ~30 s) does
//! not hold up the dispatch of other circuits' batches. Jobs of a circuit
//! being loaded stay queued meanwhile (in order, batched as before). A
//! loaded batch waits here for a synthesis permit, which its dispatcher
//! gives it before any new batch.

use super::inflight::InflightGuard;
use super::job::Job;
use super::srs_manager::SrsLease;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};

/// A batch whose SRS is leased, waiting for a permit.
pub struct Loaded {
    pub jobs: Vec<Arc<Job>>,
    pub lease: SrsLease,
    pub inflight: InflightGuard,
}

#[derive(Default)]
struct State {
    /// Loader threads not yet ended, by circuit id.
    loading: HashMap<String, usize>,
    /// Oldest first.
    loaded: VecDeque<Loaded>,
}

#[derive(Default)]
pub struct Parked {
    state: Mutex<State>,
    changed: Condvar,
}

/// A loader thread's registration: [`Loading::finish`] ends it (dropping
/// it unfinished, e.g. on a panic, ends it with no batch).
pub struct Loading {
    parked: Arc<Parked>,
    circuit_id: String,
    ended: bool,
}

impl Loading {
    /// Ends the load, listing its batch as loaded if it has one (in one
    /// step: [`Parked::wait_loaded`] never sees neither).
    pub fn finish(mut self, loaded: Option<Loaded>) {
        let parked = self.parked.clone();
        let mut st = parked.state.lock().unwrap();
        st.loaded.extend(loaded);
        self.end(&mut st);
    }

    fn end(&mut self, st: &mut State) {
        let n = st.loading.get_mut(&self.circuit_id).expect("registered");
        *n -= 1;
        if *n == 0 {
            st.loading.remove(&self.circuit_id);
        }
        self.ended = true;
        self.parked.changed.notify_all();
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        if !self.ended {
            let parked = self.parked.clone();
            self.end(&mut parked.state.lock().unwrap());
        }
    }
}

impl Parked {
    /// Registers a loader thread (before it is spawned, so that
    /// [`Self::wait_loaded`] cannot miss it).
    pub fn loading(self: &Arc<Self>, circuit_id: &str) -> Loading {
        *self.state.lock().unwrap().loading.entry(circuit_id.to_string()).or_default() += 1;
        Loading { parked: self.clone(), circuit_id: circuit_id.to_string(), ended: false }
    }

    /// Whether a parked batch is loading this circuit's SRS.
    pub fn is_loading(&self, circuit_id: &str) -> bool {
        self.state.lock().unwrap().loading.contains_key(circuit_id)
    }

    pub fn any_loaded(&self) -> bool {
        !self.state.lock().unwrap().loaded.is_empty()
    }

    pub fn take_loaded(&self) -> Option<Loaded> {
        self.state.lock().unwrap().loaded.pop_front()
    }

    /// Waits until a batch is loaded (true) or no load is under way and
    /// none is waiting (false).
    pub fn wait_loaded(&self) -> bool {
        let mut st = self.state.lock().unwrap();
        while st.loaded.is_empty() && !st.loading.is_empty() {
            st = self.changed.wait(st).unwrap();
        }
        !st.loaded.is_empty()
    }
}
