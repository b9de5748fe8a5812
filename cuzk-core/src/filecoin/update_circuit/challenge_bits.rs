//! A partition's challenges, derived in the circuit as the vanilla prover
//! derives them (storage-proofs-update's `gen_challenge_bits`): digest j is
//! Poseidon(comm_r_new, k · digests + j) with the randomness domain tag,
//! its 255 bits are cut into each challenge's bits below the partition
//! index's (as many challenges per digest as fit in 254 bits).

use super::bits::decompose;
use crate::witness_gadgets::poseidon_hash;
use bellpepper_core::boolean::AllocatedBit;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::PrimeField;
use storage_proofs_update::constants::POSEIDON_CONSTANTS_GEN_RANDOMNESS;

/// Each of `challenges` challenges' `bits_per_challenge` random bits, least
/// significant first, for partition `partition`.
pub(super) fn challenge_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    comm_r_new: &AllocatedNum<Fr>,
    partition: &AllocatedNum<Fr>,
    challenges: usize,
    bits_per_challenge: usize,
) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
    if bits_per_challenge == 0 || bits_per_challenge > Fr::CAPACITY as usize {
        return Err(SynthesisError::Unsatisfiable);
    }
    let per_digest = Fr::CAPACITY as usize / bits_per_challenge;
    let digests = challenges.div_ceil(per_digest) as u64;
    let mut out = Vec::with_capacity(challenges);
    for j in 0..digests {
        let index = AllocatedNum::alloc(cs.namespace(|| format!("digest_index_{j}")), || {
            let k = partition.get_value().ok_or(SynthesisError::AssignmentMissing)?;
            Ok(k * Fr::from(digests) + Fr::from(j))
        })?;
        cs.enforce(
            || format!("digest_index_{j} == k * digests_per_partition + {j}"),
            |lc| lc + (Fr::from(digests), partition.get_variable()) + (Fr::from(j), CS::one()),
            |lc| lc + CS::one(),
            |lc| lc + index.get_variable(),
        );
        let digest = poseidon_hash(
            cs.namespace(|| format!("digest_{j}")),
            vec![comm_r_new.clone(), index],
            &*POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;
        let bits = decompose(cs.namespace(|| format!("digest_{j}_bits")), &digest, Fr::NUM_BITS as usize)?;
        let take = (challenges - out.len()).min(per_digest);
        out.extend(bits.chunks(bits_per_challenge).take(take).map(<[_]>::to_vec));
    }
    Ok(out)
}
