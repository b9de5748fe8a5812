//! A field element's bits: bellpepper-core's `AllocatedNum::to_bits_le`
//! without the 255-term linear combination it builds for its unpacking
//! constraint.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{PrimeField, PrimeFieldBits};

/// `num.to_bits_le(cs)`: the same 255 bits, least significant first, the
/// same variables. Into a witness generator with `num`'s value known they
/// are allocated straight from the value; otherwise the gadget runs.
pub fn to_bits_le<CS: ConstraintSystem<Fr>>(mut cs: CS, num: &AllocatedNum<Fr>) -> Result<Vec<Boolean>, SynthesisError> {
    let value = match num.get_value() {
        Some(v) if cs.is_witness_generator() => v,
        _ => return num.to_bits_le(cs),
    };
    let bits = value.to_le_bits();
    (0..Fr::NUM_BITS as usize).map(|i| Ok(Boolean::Is(AllocatedBit::alloc(&mut cs, Some(bits[i]))?))).collect()
}
