//! SHA-256 preimage knowledge: private preimage bits, public digest
//! (packed into field elements), using bellpepper's SHA-256 gadget.

use bellpepper::gadgets::{multipack, sha256::sha256};
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;

#[derive(Clone, Debug)]
pub struct Sha256Preimage {
    /// Length in bytes (fixed by the shape).
    len: usize,
    preimage: Option<Vec<u8>>,
}

impl Sha256Preimage {
    /// Preimage length filling `blocks` compression blocks after padding.
    fn len_for(blocks: usize) -> usize {
        blocks * 64 - 9
    }

    pub fn blank(blocks: usize) -> Self {
        Self { len: Self::len_for(blocks), preimage: None }
    }

    pub fn random(blocks: usize, seed: u64) -> Self {
        let len = Self::len_for(blocks);
        let preimage = (0..len).map(|i| super::splitmix(seed.wrapping_mul(0x1_0000_0001) ^ i as u64) as u8).collect();
        Self { len, preimage: Some(preimage) }
    }
}

impl Circuit<Fr> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits: Vec<Option<bool>> = match &self.preimage {
            Some(p) => multipack::bytes_to_bits(p).into_iter().map(Some).collect(),
            None => vec![None; self.len * 8],
        };
        let bits = bits
            .into_iter()
            .enumerate()
            .map(|(i, b)| AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), b).map(Boolean::from))
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}
