//! The prover's constraint system: evaluates A·w, B·w, C·w per constraint
//! and tracks which variables A and B touch.

use crate::arith::Density;
use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

/// Everything the Groth16 prover needs from one synthesized circuit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProvingAssignment {
    /// Aux variables with a non-zero coefficient in some A row.
    pub a_aux_density: Density,
    /// Inputs with a non-zero coefficient in some B row.
    pub b_input_density: Density,
    /// Aux variables with a non-zero coefficient in some B row.
    pub b_aux_density: Density,
    /// The number of constraints: the length of a, b and c, or, for an
    /// assignment that carries its witness only ([`crate::pce::Pce::witness_assignment`]),
    /// what their length will be once computed from the circuit's PCE.
    pub constraints: usize,
    /// A·w, B·w, C·w for each constraint (empty while deferred: see
    /// [`ProvingAssignment::abc_deferred`]).
    pub a: Vec<Fr>,
    pub b: Vec<Fr>,
    pub c: Vec<Fr>,
    /// Public inputs, the constant one first.
    pub input_assignment: Vec<Fr>,
    /// Private (auxiliary) variables.
    pub aux_assignment: Vec<Fr>,
}

impl ProvingAssignment {
    pub fn num_constraints(&self) -> usize {
        self.constraints
    }

    /// Whether a, b, c are left to compute from the witness and the
    /// circuit's PCE (on the device that proves it, or on the CPU there).
    pub fn abc_deferred(&self) -> bool {
        self.a.len() != self.constraints
    }

    /// Appends `input_i × 0 = 0` for every input (see [`super::synthesize`]).
    pub(crate) fn append_input_constraints(&mut self) {
        for i in 0..self.input_assignment.len() {
            self.enforce(|| "", |lc| lc + super::input_var(i), |lc| lc, |lc| lc);
        }
    }
}

/// Σ coeff·value over a linear combination, marking the densities of the
/// variables with non-zero coefficients.
fn eval(
    lc: &LinearCombination<Fr>,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    inputs: &[Fr],
    aux: &[Fr],
) -> Fr {
    let mut acc = Fr::ZERO;
    for (&i, coeff) in lc.iter_inputs() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Fr::ONE { inputs[i] } else { inputs[i] * coeff };
        if let Some(d) = input_density.as_deref_mut() {
            d.set(i);
        }
    }
    for (&i, coeff) in lc.iter_aux() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += if *coeff == Fr::ONE { aux[i] } else { aux[i] * coeff };
        if let Some(d) = aux_density.as_deref_mut() {
            d.set(i);
        }
    }
    acc
}

impl ConstraintSystem<Fr> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux_assignment.push(f()?);
        self.a_aux_density.push();
        self.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.aux_assignment.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input_assignment.push(f()?);
        self.b_input_density.push();
        Ok(Variable::new_unchecked(Index::Input(self.input_assignment.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let (a, b, c) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
        let (inputs, aux) = (&self.input_assignment, &self.aux_assignment);
        // Inputs are fully dense in A through the input constraints, so
        // only the aux density of A is tracked.
        let a_val = eval(&a, None, Some(&mut self.a_aux_density), inputs, aux);
        let b_val = eval(&b, Some(&mut self.b_input_density), Some(&mut self.b_aux_density), inputs, aux);
        let c_val = eval(&c, None, None, inputs, aux);
        self.a.push(a_val);
        self.b.push(b_val);
        self.c.push(c_val);
        self.constraints += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    /// Appends another assignment synthesized separately (its first input
    /// is its own constant one and is dropped), as bellperson does.
    fn extend(&mut self, other: &Self) {
        self.a_aux_density.extend(&other.a_aux_density);
        let mut b_inputs = other.b_input_density.clone();
        // Drop the other's constant-one input bit.
        let mut rest = Density::new();
        for i in 1..b_inputs.len() {
            rest.push();
            if b_inputs.get(i) {
                rest.set(i - 1);
            }
        }
        b_inputs = rest;
        // The other's constant one is ours: if its B rows use it, so do we
        // (bellperson's DensityTracker::extend coalesces the first bits).
        if !other.b_input_density.is_empty() && other.b_input_density.get(0) && !self.b_input_density.is_empty() {
            self.b_input_density.set(0);
        }
        self.b_input_density.extend(&b_inputs);
        self.b_aux_density.extend(&other.b_aux_density);
        self.a.extend_from_slice(&other.a);
        self.b.extend_from_slice(&other.b);
        self.c.extend_from_slice(&other.c);
        self.constraints += other.constraints;
        self.input_assignment.extend_from_slice(&other.input_assignment[1..]);
        self.aux_assignment.extend_from_slice(&other.aux_assignment);
    }
}
