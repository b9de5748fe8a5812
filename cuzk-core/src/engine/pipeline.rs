//! The work items that flow between the stages, and the bookkeeping that
//! ties a batch's partitions together.
//!
//! dispatcher → [`SynthUnit`] (synthesis queue) → synthesis worker →
//! [`ProveUnit`] (prover queue) → prover worker. A unit is partition `p` of
//! every job of a batch. Each unit carries one ticket per stage; dropping
//! a ticket (on success, skip, failure or panic alike) counts the stage
//! done for the batch, which releases the batch's synthesis permit.

use super::backend::MatricesLease;
use super::inflight::InflightGuard;
use super::job::Job;
use super::memory::Reservation;
use super::request::Priority;
use super::srs_manager::SrsLease;
use crate::cs::ProvingAssignment;
use crate::partitioned::PartitionedCircuit;
use crate::pce::Pce;
use crossbeam::channel::{bounded, Receiver, Sender};
use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Synthesis permits (`pipeline.synthesis_concurrency` batches at once),
/// a pre-filled bounded channel used as a semaphore.
pub struct Permits {
    tx: Sender<()>,
    rx: Receiver<()>,
}

pub struct Permit {
    tx: Sender<()>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let _ = self.tx.send(());
    }
}

impl Permits {
    pub fn new(n: usize) -> Self {
        let (tx, rx) = bounded(n);
        for _ in 0..n {
            tx.send(()).unwrap();
        }
        Self { tx, rx }
    }

    pub fn acquire(&self) -> Permit {
        self.rx.recv().expect("permits channel holds its own sender");
        Permit { tx: self.tx.clone() }
    }
}

/// One dispatched batch: its SRS lease and its permit, held until the
/// batch's units are synthesized (pipelining on) or proved (off).
pub struct BatchCtx {
    pub srs: SrsLease,
    _inflight: InflightGuard,
    /// Estimated host bytes of one synthesized partition.
    pub partition_bytes: u64,
    synth_left: AtomicUsize,
    prove_left: AtomicUsize,
    permit: Mutex<Option<Permit>>,
    pipelined: bool,
}

impl BatchCtx {
    pub fn new(srs: SrsLease, inflight: InflightGuard, partition_bytes: u64, units: usize, permit: Permit, pipelined: bool) -> Arc<Self> {
        Arc::new(Self {
            srs,
            _inflight: inflight,
            partition_bytes,
            synth_left: AtomicUsize::new(units),
            prove_left: AtomicUsize::new(units),
            permit: Mutex::new(Some(permit)),
            pipelined,
        })
    }

    fn stage_done(&self, stage: Stage) {
        let left = match stage {
            Stage::Synthesis => &self.synth_left,
            Stage::Prove => &self.prove_left,
        };
        let now_zero = left.fetch_sub(1, Ordering::AcqRel) == 1;
        if now_zero && (stage == Stage::Prove || self.pipelined) {
            self.permit.lock().unwrap().take();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Synthesis,
    Prove,
}

/// Counts its stage done for the batch when dropped.
pub struct Ticket {
    pub batch: Arc<BatchCtx>,
    stage: Stage,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.batch.stage_done(self.stage);
    }
}

/// Queue order: higher priority, then older job, then lower partition.
pub type Order = (Reverse<Priority>, u64, usize);

pub struct Member {
    pub job: Arc<Job>,
    pub circuit: Arc<dyn PartitionedCircuit>,
    pub partition: usize,
}

pub struct SynthUnit {
    pub order: Order,
    pub members: Vec<Member>,
    pub synth_ticket: Ticket,
    pub prove_ticket: Ticket,
}

impl SynthUnit {
    pub fn new(order: Order, members: Vec<Member>, batch: &Arc<BatchCtx>) -> Self {
        Self {
            order,
            members,
            synth_ticket: Ticket { batch: batch.clone(), stage: Stage::Synthesis },
            prove_ticket: Ticket { batch: batch.clone(), stage: Stage::Prove },
        }
    }
}

pub struct ProveUnit {
    pub order: Order,
    pub members: Vec<Member>,
    /// Aligned with `members`.
    pub assignments: Vec<ProvingAssignment>,
    /// The circuit's PCE where the partitions were synthesized through one
    /// (those synthesized witness-only need it to be proved).
    pub pce: Option<Arc<Pce>>,
    /// Where they were synthesized witness-only: the backend's hold on the
    /// device matrices their a, b, c are computed from.
    pub matrices: Option<MatricesLease>,
    pub synth_times: Vec<Duration>,
    pub memory: Reservation,
    /// `memory` counts the working copies of a, b, c an H term on the host
    /// makes ([`super::backend::ProveInput::h_copies_counted`]).
    pub h_copies_counted: bool,
    pub prove_ticket: Ticket,
}

macro_rules! order_by_key {
    ($t:ty) => {
        impl $t {
            /// Of urgent jobs ([`Priority::is_urgent`]): the workers kept
            /// for urgent work take it, and it passes full queues.
            pub fn urgent(&self) -> bool {
                (self.order.0).0.is_urgent()
            }
        }
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.order == other.order
            }
        }
        impl Eq for $t {}
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> CmpOrdering {
                self.order.cmp(&other.order)
            }
        }
    };
}

order_by_key!(SynthUnit);
order_by_key!(ProveUnit);
