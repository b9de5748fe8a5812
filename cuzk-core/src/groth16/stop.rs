//! Asking a running prove to stop early.
//!
//! A prove serves jobs that can end while it runs (cancelled, a shutdown
//! past its timeout, a failure of another partition). One partition of a
//! 32 GiB PoRep takes minutes on the CPU backend: a prove that went on to
//! the end would hold its worker, and a shutdown, long after nobody wants
//! its proof. The engine hands the prover a [`StopCheck`]; the provers ask
//! it at their boundaries (each circuit of a batch, after the H term,
//! between MSMs) and give up with [`super::ProveError::Stopped`] once it
//! says stop. One MSM is not interrupted: its chunks run as one parallel
//! pass, and splitting it would make every prove slower.

/// Whether the work a prove is for is still wanted (`requested()` false)
/// or not. Copy, so it travels with the prover's input by value.
#[derive(Clone, Copy)]
pub struct StopCheck<'a>(Option<&'a (dyn Fn() -> bool + Sync)>);

impl<'a> StopCheck<'a> {
    /// A prove that runs to its end (tools, benches, tests).
    pub const NEVER: StopCheck<'static> = StopCheck(None);

    /// Stops once `stop` returns true (called at each boundary: keep it
    /// cheap).
    pub fn new(stop: &'a (dyn Fn() -> bool + Sync)) -> Self {
        StopCheck(Some(stop))
    }

    pub fn requested(&self) -> bool {
        self.0.is_some_and(|stop| stop())
    }
}

impl std::fmt::Debug for StopCheck<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "StopCheck(..)" } else { "StopCheck::NEVER" })
    }
}
