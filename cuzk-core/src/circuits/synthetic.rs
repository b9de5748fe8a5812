//! A partition-shaped synthetic circuit: an exact constraint count and a
//! witness that looks like a Filecoin PoRep partition's (about 90 % of the
//! aux values 0 or 1, A touching nearly every variable, B about a quarter).
//!
//! Structure depends only on (constraints, inputs); the witness only on the
//! seed, so every instance of one shape shares one set of parameters.
//!
//! Each constraint defines one new aux variable w from earlier ones:
//! - NOT  (≈65 %): (1 − b)·1 = w, b the latest boolean
//! - AND  (≈25 %): b·y = w, y the oldest unused boolean of the "B pool"
//!   (every third variable), so about a quarter of the variables reach B
//! - FULL (≈9 %):  (f + b + k)·s = w, f the latest full element, s a seed
//! - BIT  (≈1 %):  w·w = w, a fresh random bit (witness entropy)
//!
//! then one `x_j·1 = w_j` per public input, exposing spread-out variables.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;

pub const DEFAULT_INPUTS: usize = 8;

/// Constraints that are not NOT/AND/FULL/BIT: the two seeds.
const SEED_CONSTRAINTS: usize = 2;

#[derive(Clone, Debug)]
pub struct Synthetic {
    constraints: usize,
    inputs: usize,
    seed: Option<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Not,
    And,
    Full,
    Bit,
}

fn kind_of(i: usize) -> Kind {
    match super::splitmix(i as u64 ^ 0x5EED0F5EED) % 100 {
        0..=64 => Kind::Not,
        65..=89 => Kind::And,
        90..=98 => Kind::Full,
        _ => Kind::Bit,
    }
}

impl Synthetic {
    /// `constraints` counts everything the prover sees, including the
    /// constraints bellperson adds for the constant one and each input.
    pub fn new(constraints: usize, inputs: usize, seed: Option<u64>) -> Self {
        assert!(constraints >= Self::min_constraints(inputs), "too few constraints for the inputs");
        Self { constraints, inputs, seed }
    }

    pub fn min_constraints(inputs: usize) -> usize {
        // seeds + one body constraint + one per input + the input constraints.
        SEED_CONSTRAINTS + 1 + 2 * inputs + 1
    }

    fn body_constraints(&self) -> usize {
        self.constraints - (self.inputs + 1) - self.inputs - SEED_CONSTRAINTS
    }
}

impl Circuit<Fr> for Synthetic {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let body = self.body_constraints();
        let witness = self.seed.is_some();
        let seed = self.seed.unwrap_or(0);
        let missing = || SynthesisError::AssignmentMissing;
        let one = CS::one();
        // Values of every aux variable (empty without witness).
        let mut vals: Vec<Fr> = Vec::with_capacity(if witness { body + 2 } else { 0 });
        let val = |v: &[Fr], i: usize| if witness { Some(v[i]) } else { None };
        let mut vars: Vec<Variable> = Vec::with_capacity(body + 2);

        // Seeds: a random bit b0 and a random full element s.
        let b0_val = super::splitmix(seed) & 1 == 1;
        let b0 = cs.alloc(|| "b0", || if witness { Ok(Fr::from(b0_val as u64)) } else { Err(missing()) })?;
        cs.enforce(|| "b0 bit", |lc| lc + b0, |lc| lc + b0, |lc| lc + b0);
        let s_val = super::field_from_seed(seed ^ 0x5EED);
        let s = cs.alloc(|| "s", || if witness { Ok(s_val) } else { Err(missing()) })?;
        cs.enforce(|| "s seed", |lc| lc + s, |lc| lc + one, |lc| lc + s);
        if witness {
            vals.push(Fr::from(b0_val as u64));
            vals.push(s_val);
        }
        vars.push(b0);
        vars.push(s);

        let mut latest_bool = 0usize; // index into vars
        let mut latest_full = 1usize;
        // Booleans waiting to appear in B, oldest first; `last_pooled` is
        // reused when the queue runs dry.
        let mut pool: std::collections::VecDeque<usize> = std::collections::VecDeque::from([0]);
        let mut last_pooled = 0usize;
        for i in 0..body {
            let h = super::splitmix(i as u64 ^ 0xB0D1);
            let kind = kind_of(i);
            let b = vars[latest_bool];
            let bv = val(&vals, latest_bool);
            let (value, a, bq, c): (Option<Fr>, LinearCombination<Fr>, LinearCombination<Fr>, bool) = match kind {
                Kind::Not => (bv.map(|x| Fr::ONE - x), LinearCombination::zero() + one - b, LinearCombination::zero() + one, true),
                Kind::And => {
                    let y = pool.pop_front().unwrap_or(last_pooled);
                    (bv.zip(val(&vals, y)).map(|(x, yv)| x * yv), LinearCombination::zero() + b, LinearCombination::zero() + vars[y], true)
                }
                Kind::Full => {
                    let k = super::field_from_seed(h);
                    let f = vars[latest_full];
                    (
                        bv.zip(val(&vals, latest_full)).map(|(x, fv)| (fv + x + k) * s_val),
                        LinearCombination::zero() + f + b + (k, one),
                        LinearCombination::zero() + s,
                        true,
                    )
                }
                Kind::Bit => (
                    Some(Fr::from(super::splitmix(seed ^ (i as u64).rotate_left(17)) & 1)),
                    LinearCombination::zero(),
                    LinearCombination::zero(),
                    false,
                ),
            };
            let value = if witness { value } else { None };
            let w = cs.alloc(|| format!("w{i}"), || value.ok_or_else(missing))?;
            if c {
                cs.enforce(|| format!("c{i}"), |_| a, |_| bq, |lc| lc + w);
            } else {
                cs.enforce(|| format!("c{i}"), |lc| lc + w, |lc| lc + w, |lc| lc + w);
            }
            let idx = vars.len();
            vars.push(w);
            if let Some(v) = value {
                vals.push(v);
            }
            if kind == Kind::Full {
                latest_full = idx;
            } else {
                latest_bool = idx;
                if idx.is_multiple_of(3) {
                    pool.push_back(idx);
                    last_pooled = idx;
                }
            }
        }

        // Public inputs expose variables spread over the circuit.
        for j in 0..self.inputs {
            let idx = 2 + (j * body) / self.inputs.max(1);
            let v = val(&vals, idx);
            let x = cs.alloc_input(|| format!("x{j}"), || v.ok_or_else(missing))?;
            cs.enforce(|| format!("expose {j}"), |lc| lc + x, |lc| lc + one, |lc| lc + vars[idx]);
        }
        Ok(())
    }
}
