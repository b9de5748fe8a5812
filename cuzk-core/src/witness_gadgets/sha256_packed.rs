//! SHA-256 packed into a field element, as Filecoin's SHA-256 hasher does in
//! its circuits (filecoin-hashers 14 `Sha256Function::hash_circuit`, under
//! `hash2_circuit`, `hash_multi_leaf_circuit` and the comm_d inclusion paths):
//! the digest's first 254 bits, each byte's bits least significant first.

use bellpepper::gadgets::multipack;
use bellpepper_core::boolean::Boolean;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::PrimeField;

use super::aux_sink::AuxSink;
use super::num_bits::to_bits_le;
use super::sha256::{digest_words, DigestBits, DigestWord};

/// `Sha256Function::hash_circuit(cs, bits)`: the same variables in the same
/// order and the same value. Into a witness generator with every bit's value
/// known the digest's bits are plain values (the gadget only packs them);
/// otherwise bellpepper's `sha256` and `pack_bits`, as the hasher calls them.
pub fn sha256_packed<CS: ConstraintSystem<Fr>>(mut cs: CS, bits: &[Boolean]) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if !cs.is_witness_generator() || bits.iter().any(|b| b.get_value().is_none()) {
        let be_bits = bellpepper::gadgets::sha256::sha256(cs.namespace(|| "hash"), bits)?;
        let le_bits: Vec<Boolean> = be_bits.chunks(8).flat_map(|byte| byte.iter().rev()).take(Fr::CAPACITY as usize).cloned().collect();
        return multipack::pack_bits(cs.namespace(|| "pack_le"), &le_bits);
    }
    packed_witness(cs, bits)
}

/// `Sha256Function::hash_multi_leaf_circuit(cs, leaves, _)` (and, for two
/// leaves, `hash2_circuit`): each leaf's 255 bits padded to 32 bytes, each
/// byte's bits most significant first, hashed and packed.
pub fn sha256_multi_leaf<CS: ConstraintSystem<Fr>>(mut cs: CS, leaves: &[AllocatedNum<Fr>]) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut bits = Vec::with_capacity(leaves.len() * 256);
    for (i, leaf) in leaves.iter().enumerate() {
        let mut le = to_bits_le(cs.namespace(|| format!("{i}_num_into_bits")), leaf)?;
        le.resize(le.len().next_multiple_of(8), Boolean::Constant(false));
        bits.extend(le.chunks_exact(8).flat_map(|byte| byte.iter().rev()).cloned());
    }
    sha256_packed(cs, &bits)
}

/// The witness path of [`sha256_packed`], for callers that have checked
/// `cs` is a witness generator and every bit has a value.
pub(crate) fn packed_witness<CS: ConstraintSystem<Fr>>(mut cs: CS, bits: &[Boolean]) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut sink = AuxSink::new();
    let digest = digest_words(&mut cs, &mut sink, bits, DigestBits::ValuesOnly)?;
    sink.flush(&mut cs);
    let value = packed_value(&digest);
    AllocatedNum::alloc(cs.namespace(|| "pack_le"), || Ok(value))
}

/// The digest as a little-endian integer with its top two bits cleared:
/// what packing its first 254 bits, each byte's least significant first,
/// gives.
fn packed_value(digest: &[DigestWord]) -> Fr {
    let mut repr = [0u8; 32];
    for (k, d) in digest.iter().enumerate() {
        repr[4 * k..4 * k + 4].copy_from_slice(&d.word.value.to_be_bytes());
    }
    repr[31] &= 0x3f;
    Fr::from_repr_vartime(repr).expect("a 254-bit integer is below the field modulus")
}
