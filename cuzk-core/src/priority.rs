//! How urgent a job is: numbered as in the gRPC `cuzk.v1.Priority` enum;
//! higher runs first. A request that gives none gets its kind's default
//! ([`crate::circuit_source::CircuitRequest::default_priority`]).

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Priority {
    Low = 1,
    Normal = 2,
    High = 3,
    Critical = 4,
}

impl Priority {
    /// High and Critical: work with a deadline (e.g. Filecoin PoSt). The
    /// engine keeps capacity that only urgent work may use at every stage
    /// (a dispatcher, synthesis workers, a memory reserve, a prover worker
    /// per device), so it never waits for normal work to finish.
    pub fn is_urgent(self) -> bool {
        self >= Priority::High
    }
}
