//! A Groth16 proof and its 192-byte wire form: compressed A (48 bytes),
//! B (96), C (48), the ZCash/blst point encoding bellperson uses.

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

pub const PROOF_BYTES: usize = 192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProofError {
    #[error("a proof is {PROOF_BYTES} bytes, got {0}")]
    Length(usize),
    #[error("proof point {0} is not a valid compressed point in its subgroup")]
    InvalidPoint(&'static str),
    #[error("proof point {0} is the point at infinity")]
    Infinity(&'static str),
}

impl Proof {
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Parses 192 bytes, checking every point is on the curve and in the
    /// prime-order subgroup, and not the identity.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ProofError> {
        if bytes.len() != PROOF_BYTES {
            return Err(ProofError::Length(bytes.len()));
        }
        let a =
            Option::<G1Affine>::from(G1Affine::from_compressed(bytes[..48].try_into().unwrap())).ok_or(ProofError::InvalidPoint("A"))?;
        let b =
            Option::<G2Affine>::from(G2Affine::from_compressed(bytes[48..144].try_into().unwrap())).ok_or(ProofError::InvalidPoint("B"))?;
        let c =
            Option::<G1Affine>::from(G1Affine::from_compressed(bytes[144..].try_into().unwrap())).ok_or(ProofError::InvalidPoint("C"))?;
        for (name, inf) in [("A", a.is_identity()), ("B", b.is_identity()), ("C", c.is_identity())] {
            if bool::from(inf) {
                return Err(ProofError::Infinity(name));
            }
        }
        Ok(Proof { a, b, c })
    }

    /// Splits concatenated proofs (e.g. the partitions of a PoRep).
    pub fn many_from_bytes(bytes: &[u8]) -> Result<Vec<Self>, ProofError> {
        if !bytes.len().is_multiple_of(PROOF_BYTES) {
            return Err(ProofError::Length(bytes.len()));
        }
        bytes.chunks(PROOF_BYTES).map(Self::from_bytes).collect()
    }
}
