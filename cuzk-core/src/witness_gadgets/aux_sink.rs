//! A staging buffer for witness values that a fast witness generator
//! produces in allocation order and hands to the constraint system in bulk.

use bellpepper_core::ConstraintSystem;
use blstrs::Scalar as Fr;
use ff::Field;

/// Entries kept before they are handed over: small enough to stay in cache.
const FLUSH_AT: usize = 4096;

/// Auxiliary values not yet given to the constraint system. The order of
/// pushes is the order of the variables; [`AuxSink::flush`] must run before
/// anything else allocates through the constraint system.
pub(crate) struct AuxSink {
    pending: Vec<Fr>,
}

impl AuxSink {
    pub(crate) fn new() -> Self {
        AuxSink { pending: Vec::with_capacity(FLUSH_AT + 1024) }
    }

    /// A field element (Poseidon's, with the filecoin feature).
    #[inline]
    #[cfg_attr(not(feature = "filecoin"), allow(dead_code))]
    pub(crate) fn push(&mut self, value: Fr) {
        self.pending.push(value);
    }

    #[inline]
    pub(crate) fn bit(&mut self, b: bool) {
        self.pending.push(if b { Fr::ONE } else { Fr::ZERO });
    }

    /// Pushes bit `i` of `values` for every bit `i` set in `mask`, lowest first.
    #[inline]
    pub(crate) fn masked_bits(&mut self, mask: u32, values: u32) {
        if mask == u32::MAX {
            self.pending.extend((0..32).map(|i| if (values >> i) & 1 == 1 { Fr::ONE } else { Fr::ZERO }));
        } else {
            let mut m = mask;
            while m != 0 {
                let i = m.trailing_zeros();
                self.bit((values >> i) & 1 == 1);
                m &= m - 1;
            }
        }
    }

    /// Hands the pending values over once enough have gathered.
    #[inline]
    pub(crate) fn flush_if_full<CS: ConstraintSystem<Fr>>(&mut self, cs: &mut CS) {
        if self.pending.len() >= FLUSH_AT {
            self.flush(cs);
        }
    }

    pub(crate) fn flush<CS: ConstraintSystem<Fr>>(&mut self, cs: &mut CS) {
        if !self.pending.is_empty() {
            cs.extend_aux(&self.pending);
            self.pending.clear();
        }
    }
}
