//! Poseidon's witness: neptune 11's legacy `circuit::poseidon_hash` (the one
//! filecoin-hashers' Poseidon hasher calls for columns, tree_c, tree_r_last
//! and comm_r) without the linear combinations it carries between rounds.
//!
//! What the gadget allocates: every S-box allocates its input when that is a
//! linear combination (after an MDS product it always is; the preimage is
//! already allocated), then x², x⁴ and x⁵ plus the round key; the first
//! round adds its pre-round key inside the square and the product instead,
//! and the domain tag's S-box there is a constant. The result is the state's
//! element 1, allocated last.

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use neptune::hash_type::HashType;
use neptune::poseidon::PoseidonConstants;
use neptune::Arity;

use super::aux_sink::AuxSink;

/// `neptune::circuit::poseidon_hash(cs, preimage, constants)`: the same
/// variables in the same order and the same result. Into a witness
/// generator with every preimage value known the rounds run on values;
/// otherwise (or for a preimage that is not `A` long) the gadget runs.
pub fn poseidon_hash<CS, A>(
    mut cs: CS,
    preimage: Vec<AllocatedNum<Fr>>,
    constants: &PoseidonConstants<Fr, A>,
) -> Result<AllocatedNum<Fr>, SynthesisError>
where
    CS: ConstraintSystem<Fr>,
    A: Arity<Fr>,
{
    let values: Option<Vec<Fr>> = preimage.iter().map(AllocatedNum::get_value).collect();
    let values = match values {
        Some(v) if cs.is_witness_generator() && v.len() == A::to_usize() => v,
        _ => return neptune::circuit::poseidon_hash(cs, preimage, constants),
    };
    if let HashType::ConstantLength(length) = constants.hash_type {
        assert!(length == A::to_usize(), "a constant-length Poseidon must be as long as its arity");
    }
    let mut sink = AuxSink::new();
    let result = permutation(&mut sink, &values, constants);
    sink.flush(&mut cs);
    AllocatedNum::alloc(cs.namespace(|| "hash result"), || Ok(result))
}

/// The state through every round, pushing what the gadget allocates;
/// returns the result (element 1).
fn permutation<A: Arity<Fr>>(sink: &mut AuxSink, preimage: &[Fr], c: &PoseidonConstants<Fr, A>) -> Fr {
    let width = c.width();
    let keys = &c.compressed_round_constants;
    let mut state = Vec::with_capacity(width);
    state.push(c.domain_tag);
    state.extend_from_slice(preimage);
    let mut mds = Mds { round: 0, constants: c };

    // First full round: pre- and post-round keys; the tag's S-box is a
    // constant, the preimage is allocated already.
    let (pre, post) = (&keys[..width], &keys[width..2 * width]);
    let mut offset = 2 * width;
    state[0] = quintic(state[0] + pre[0]) + post[0];
    for i in 1..width {
        let x = state[i] + pre[i];
        state[i] = s_box(sink, x, post[i]);
    }
    mds.apply(&mut state);

    let full_round = |sink: &mut AuxSink, state: &mut [Fr], post: Option<&[Fr]>| {
        for (i, x) in state.iter_mut().enumerate() {
            sink.push(*x);
            *x = s_box(sink, *x, post.map_or(Fr::ZERO, |p| p[i]));
        }
    };
    for _ in 1..c.full_rounds / 2 {
        full_round(sink, &mut state, Some(&keys[offset..offset + width]));
        offset += width;
        mds.apply(&mut state);
    }
    for _ in 0..c.partial_rounds {
        sink.push(state[0]);
        state[0] = s_box(sink, state[0], keys[offset]);
        offset += 1;
        mds.apply(&mut state);
    }
    for _ in 0..c.full_rounds / 2 - 1 {
        full_round(sink, &mut state, Some(&keys[offset..offset + width]));
        offset += width;
        mds.apply(&mut state);
    }
    // Terminal round: no round keys after it.
    full_round(sink, &mut state, None);
    mds.apply(&mut state);
    state[1]
}

fn quintic(x: Fr) -> Fr {
    x.square().square() * x
}

/// x², x⁴ and x⁵ + key, allocated in that order (x itself, when it needs
/// allocating, is pushed by the caller); returns the last.
fn s_box(sink: &mut AuxSink, x: Fr, key: Fr) -> Fr {
    let x2 = x.square();
    let x4 = x2.square();
    let x5 = x4 * x + key;
    sink.push(x2);
    sink.push(x4);
    sink.push(x5);
    x5
}

/// The gadget's MDS products: the dense matrix in the full rounds, the
/// pre-sparse matrix before the partial rounds and one sparse matrix each
/// in them, chosen by how many products came before.
struct Mds<'a, A: Arity<Fr>> {
    round: usize,
    constants: &'a PoseidonConstants<Fr, A>,
}

impl<A: Arity<Fr>> Mds<'_, A> {
    fn apply(&mut self, state: &mut [Fr]) {
        let c = self.constants;
        let sparse_offset = c.half_full_rounds - 1;
        if self.round == sparse_offset {
            dense(state, &c.pre_sparse_matrix);
        } else if self.round > sparse_offset && self.round < c.half_full_rounds + c.partial_rounds {
            let m = &c.sparse_matrixes[self.round - sparse_offset - 1];
            let first: Fr = state.iter().zip(&m.w_hat).map(|(s, w)| *s * w).sum();
            let s0 = state[0];
            for (s, v) in state[1..].iter_mut().zip(&m.v_rest) {
                *s += s0 * v;
            }
            state[0] = first;
        } else {
            dense(state, &c.mds_matrices.m);
        }
        self.round += 1;
    }
}

/// `state · matrix` (row vector times matrix).
fn dense(state: &mut [Fr], matrix: &[Vec<Fr>]) {
    let result: Vec<Fr> = (0..state.len()).map(|j| state.iter().zip(matrix).map(|(s, row)| *s * row[j]).sum()).collect();
    state.copy_from_slice(&result);
}
