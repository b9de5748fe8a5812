//! A chain of MiMC-style permutations (x ↦ x³ Feistel, 322 rounds per
//! hash): every witness value is a full field element, the opposite of the
//! Filecoin-like circuits. The final output is public.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;

pub const ROUNDS_PER_HASH: usize = 322;

#[derive(Clone, Debug)]
pub struct MimcChain {
    rounds: usize,
    /// The two starting halves.
    start: Option<(Fr, Fr)>,
}

fn round_constant(i: usize) -> Fr {
    super::field_from_seed(0x4D69_4D43_0000_0000 ^ i as u64)
}

impl MimcChain {
    pub fn blank(hashes: usize) -> Self {
        Self { rounds: hashes * ROUNDS_PER_HASH, start: None }
    }

    pub fn random(hashes: usize, seed: u64) -> Self {
        let s = seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
        Self { rounds: hashes * ROUNDS_PER_HASH, start: Some((super::field_from_seed(s), super::field_from_seed(!s))) }
    }

    /// The chain evaluated natively (the circuit's public output).
    pub fn output(&self) -> Option<Fr> {
        let (mut xl, mut xr) = self.start?;
        for i in 0..self.rounds {
            let t = xl + round_constant(i);
            let next = t.square() * t + xr;
            xr = xl;
            xl = next;
        }
        Some(xl)
    }
}

impl Circuit<Fr> for MimcChain {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let missing = || SynthesisError::AssignmentMissing;
        let mut xl_val = self.start.map(|s| s.0);
        let mut xr_val = self.start.map(|s| s.1);
        let mut xl = cs.alloc(|| "xl", || xl_val.ok_or_else(missing))?;
        let mut xr = cs.alloc(|| "xr", || xr_val.ok_or_else(missing))?;
        for i in 0..self.rounds {
            let c = round_constant(i);
            let mut cs = cs.namespace(|| format!("round {i}"));
            // t² = (xl + c)²
            let t_val = xl_val.map(|x| x + c);
            let sq_val = t_val.map(|t| t.square());
            let sq = cs.alloc(|| "t^2", || sq_val.ok_or_else(missing))?;
            cs.enforce(|| "square", |lc| lc + xl + (c, CS::one()), |lc| lc + xl + (c, CS::one()), |lc| lc + sq);
            // new xl = t²·t + xr; the last one is the public output.
            let new_val = sq_val.zip(t_val).zip(xr_val).map(|((s, t), r)| s * t + r);
            let new_xl = if i + 1 == self.rounds {
                cs.alloc_input(|| "output", || new_val.ok_or_else(missing))?
            } else {
                cs.alloc(|| "xl", || new_val.ok_or_else(missing))?
            };
            cs.enforce(|| "cube", |lc| lc + sq, |lc| lc + xl + (c, CS::one()), |lc| lc + new_xl - xr);
            xr = xl;
            xr_val = xl_val;
            xl = new_xl;
            xl_val = new_val;
        }
        Ok(())
    }
}
