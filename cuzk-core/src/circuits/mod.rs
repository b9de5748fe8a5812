//! Built-in circuits for tests, demos and benchmarks, built from the
//! ecosystem's gadgets (bellpepper 0.2, as bellperson 0.27 uses):
//!
//! - `sha256:<blocks>`: knowledge of a SHA-256 preimage; the digest is
//!   public. Boolean witness, like Filecoin's hashing circuits.
//! - `mimc:<hashes>`: a chain of MiMC hashes; full field-element witness.
//! - `synthetic:<constraints>[:<inputs>]`: partition-shaped: exactly the
//!   given number of constraints (input constraints included), ~90 % of the
//!   witness 0/1, A dense, B ~25 % dense, like a Filecoin PoRep partition.
//!
//! A [`CircuitSpec`] names a circuit shape; [`CircuitSpec::instance`] gives
//! a satisfied instance with a witness drawn from a seed, and
//! [`CircuitSpec::blank`] one without a witness (for setup).

mod mimc;
mod sha256;
mod synthetic;

pub use mimc::MimcChain;
pub use sha256::Sha256Preimage;
pub use synthetic::Synthetic;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use std::fmt;
use std::str::FromStr;

/// The shape of a built-in circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitSpec {
    Sha256 { blocks: usize },
    Mimc { hashes: usize },
    Synthetic { constraints: usize, inputs: usize },
}

/// A built-in circuit instance (with or without witness).
#[derive(Clone)]
pub enum BuiltinCircuit {
    Sha256(Sha256Preimage),
    Mimc(MimcChain),
    Synthetic(Synthetic),
}

impl CircuitSpec {
    /// An instance whose witness is derived from `seed`.
    pub fn instance(&self, seed: u64) -> BuiltinCircuit {
        match *self {
            CircuitSpec::Sha256 { blocks } => BuiltinCircuit::Sha256(Sha256Preimage::random(blocks, seed)),
            CircuitSpec::Mimc { hashes } => BuiltinCircuit::Mimc(MimcChain::random(hashes, seed)),
            CircuitSpec::Synthetic { constraints, inputs } => BuiltinCircuit::Synthetic(Synthetic::new(constraints, inputs, Some(seed))),
        }
    }

    /// Its constraints, input constraints included (exact: the tests
    /// synthesize each kind), without building it.
    pub fn constraints(&self) -> usize {
        match *self {
            CircuitSpec::Sha256 { blocks } => blocks.saturating_mul(26_704).saturating_sub(670),
            CircuitSpec::Mimc { hashes } => hashes.saturating_mul(644).saturating_add(2),
            CircuitSpec::Synthetic { constraints, .. } => constraints,
        }
    }

    /// An instance without witness, for parameter generation.
    pub fn blank(&self) -> BuiltinCircuit {
        match *self {
            CircuitSpec::Sha256 { blocks } => BuiltinCircuit::Sha256(Sha256Preimage::blank(blocks)),
            CircuitSpec::Mimc { hashes } => BuiltinCircuit::Mimc(MimcChain::blank(hashes)),
            CircuitSpec::Synthetic { constraints, inputs } => BuiltinCircuit::Synthetic(Synthetic::new(constraints, inputs, None)),
        }
    }
}

impl BuiltinCircuit {
    /// The public inputs of this instance (without the constant one), by
    /// running its witness generation.
    pub fn public_inputs(&self) -> Result<Vec<Fr>, SynthesisError> {
        let w = crate::cs::generate_witness(self.clone())?;
        Ok(w.input_assignment[1..].to_vec())
    }
}

impl Circuit<Fr> for BuiltinCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            BuiltinCircuit::Sha256(c) => c.synthesize(cs),
            BuiltinCircuit::Mimc(c) => c.synthesize(cs),
            BuiltinCircuit::Synthetic(c) => c.synthesize(cs),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad circuit spec {:?}: {reason} (expected sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>], numbers like 1000 or 2^20)", crate::client_text::clipped(.spec))]
pub struct SpecError {
    spec: String,
    reason: String,
}

fn parse_count(s: &str) -> Result<usize, String> {
    let v = if let Some(exp) = s.strip_prefix("2^") {
        let e: u32 = exp.parse().map_err(|_| format!("{:?} is not a number", crate::client_text::clipped(s)))?;
        if e > 40 {
            return Err(format!("2^{e} is too large"));
        }
        1usize << e
    } else {
        s.replace('_', "").parse().map_err(|_| format!("{:?} is not a number", crate::client_text::clipped(s)))?
    };
    Ok(v)
}

impl FromStr for CircuitSpec {
    type Err = SpecError;
    fn from_str(spec: &str) -> Result<Self, SpecError> {
        let err = |reason: String| SpecError { spec: spec.to_string(), reason };
        let parts: Vec<&str> = spec.split(':').collect();
        let num = |i: usize| parts.get(i).ok_or_else(|| err("missing size".into())).and_then(|p| parse_count(p).map_err(err));
        let out = match parts[0] {
            "sha256" if parts.len() == 2 => CircuitSpec::Sha256 { blocks: num(1)? },
            "mimc" if parts.len() == 2 => CircuitSpec::Mimc { hashes: num(1)? },
            "synthetic" if parts.len() == 2 || parts.len() == 3 => {
                CircuitSpec::Synthetic { constraints: num(1)?, inputs: if parts.len() == 3 { num(2)? } else { synthetic::DEFAULT_INPUTS } }
            }
            "sha256" | "mimc" | "synthetic" => return Err(err("wrong number of ':' fields".into())),
            other => return Err(err(format!("unknown circuit {other:?}"))),
        };
        match out {
            CircuitSpec::Sha256 { blocks: 0 } | CircuitSpec::Mimc { hashes: 0 } => Err(err("size must be at least 1".into())),
            CircuitSpec::Synthetic { constraints, inputs } if constraints < Synthetic::min_constraints(inputs) => Err(err(format!(
                "{constraints} constraints cannot hold {inputs} inputs (need at least {})",
                Synthetic::min_constraints(inputs)
            ))),
            ok => Ok(ok),
        }
    }
}

impl fmt::Display for CircuitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitSpec::Sha256 { blocks } => write!(f, "sha256:{blocks}"),
            CircuitSpec::Mimc { hashes } => write!(f, "mimc:{hashes}"),
            CircuitSpec::Synthetic { constraints, inputs } => write!(f, "synthetic:{constraints}:{inputs}"),
        }
    }
}

/// SplitMix64: the deterministic stream that picks circuit structure and
/// witness values (not cryptographic; structure must not depend on the
/// witness seed).
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A field element from a 64-bit seed (for constants and witnesses).
pub(crate) fn field_from_seed(seed: u64) -> Fr {
    let lo = splitmix(seed) as u128 | (splitmix(seed ^ 0xA5A5) as u128) << 64;
    let hi = splitmix(seed ^ 0x5A5A) as u128 | (splitmix(seed ^ 0xC3C3) as u128) << 64;
    use ff::PrimeField;
    Fr::from_u128(hi) * Fr::from_u128(u128::MAX) + Fr::from_u128(lo)
}

#[cfg(test)]
mod tests {
    use super::CircuitSpec;

    #[test]
    fn constraint_counts_match_synthesis() {
        for spec in ["sha256:1", "sha256:3", "mimc:1", "mimc:5", "synthetic:1500:4"] {
            let spec: CircuitSpec = spec.parse().unwrap();
            let pa = crate::cs::synthesize(spec.instance(7)).unwrap();
            assert_eq!(spec.constraints(), pa.num_constraints(), "{spec}");
        }
    }
}
