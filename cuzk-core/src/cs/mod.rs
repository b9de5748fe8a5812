//! Constraint systems that bellpepper circuits synthesize into.
//!
//! - [`ProvingAssignment`]: what the prover needs (a, b, c per constraint,
//!   assignments, density bitmaps), recorded exactly as bellperson 0.27 does.
//! - [`WitnessOnly`]: runs the allocation closures, ignores constraints.
//! - [`synthesize`]: the full prover-side synthesis of one circuit, with the
//!   `one` input and the `input_i · 1 = 0` constraints bellperson adds.

mod proving_assignment;
mod witness;

pub use proving_assignment::ProvingAssignment;
pub use witness::WitnessOnly;

use bellpepper_core::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

/// Synthesizes `circuit` for proving: allocates the constant-one input,
/// runs the circuit, then appends one `input_i × 0 = 0` constraint per
/// public input (which makes the IC query fully dense, as bellperson does).
pub fn synthesize<C: Circuit<Fr>>(circuit: C) -> Result<ProvingAssignment, SynthesisError> {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    cs.append_input_constraints();
    Ok(cs)
}

/// Runs only the witness generation of `circuit`: public inputs (including
/// the leading one) and auxiliary assignment, no constraints.
pub fn generate_witness<C: Circuit<Fr>>(circuit: C) -> Result<WitnessOnly, SynthesisError> {
    generate_witness_into(circuit, WitnessOnly::new())
}

/// [`generate_witness`] into `cs`, an empty witness made with room for it
/// ([`WitnessOnly::with_capacity`]).
pub fn generate_witness_into<C: Circuit<Fr>>(circuit: C, mut cs: WitnessOnly) -> Result<WitnessOnly, SynthesisError> {
    debug_assert!(cs.input_assignment.is_empty() && cs.aux_assignment.is_empty(), "an empty witness");
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs)
}

pub(crate) fn input_var(i: usize) -> Variable {
    Variable::new_unchecked(Index::Input(i))
}
