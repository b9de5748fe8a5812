//! Bits as the SnapDeals circuit allocates them: a number's low bits with
//! the constraint that they sum to it, and allocated bits packed into a
//! number. Each builds its linear combination inside the constraint's
//! closure, so a witness-only synthesis never builds it.

use bellpepper_core::boolean::AllocatedBit;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField, PrimeFieldBits};

/// `lc + Σ 2^i · bits[i]`.
fn weighted(mut lc: LinearCombination<Fr>, bits: &[AllocatedBit]) -> LinearCombination<Fr> {
    let mut pow2 = Fr::ONE;
    for bit in bits {
        lc = lc + (pow2, bit.get_variable());
        pow2 = pow2.double();
    }
    lc
}

/// The `n` low bits of `num`, least significant first, and the constraint
/// `Σ 2^i · bit_i = num`: storage-proofs-update's
/// `allocated_num_to_allocated_bits` (n = 255) and its `k_and_h_select`
/// split (n = its bit length), variable for variable.
pub(super) fn decompose<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    num: &AllocatedNum<Fr>,
    n: usize,
) -> Result<Vec<AllocatedBit>, SynthesisError> {
    if n > Fr::NUM_BITS as usize {
        return Err(SynthesisError::Unsatisfiable);
    }
    let values = num.get_value().map(|v| v.to_le_bits());
    let bits = (0..n)
        .map(|i| AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), values.as_ref().map(|v| v[i])))
        .collect::<Result<Vec<_>, _>>()?;
    cs.enforce(
        || "binary decomposition",
        |lc| weighted(lc, &bits),
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
    Ok(bits)
}

/// bellpepper's `multipack::pack_bits` on allocated bits: the number they
/// spell, least significant first, and the packing constraint.
pub(super) fn pack<CS: ConstraintSystem<Fr>>(mut cs: CS, bits: &[AllocatedBit]) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let bits = &bits[..bits.len().min(Fr::CAPACITY as usize)];
    let value = bits.iter().rev().try_fold(Fr::ZERO, |acc, b| b.get_value().map(|v| acc.double() + if v { Fr::ONE } else { Fr::ZERO }));
    let num = AllocatedNum::alloc(cs.namespace(|| "input"), || value.ok_or(SynthesisError::AssignmentMissing))?;
    cs.enforce(
        || "packing constraint",
        |lc| weighted(lc, bits),
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
    Ok(num)
}
