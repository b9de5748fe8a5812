//! The small files the CLI reads and writes besides params: proofs
//! (concatenated 192-byte proofs) and public inputs (one line per proof,
//! comma-separated field elements as 0x-prefixed big-endian hex).

use anyhow::{bail, Context, Result};
use cuzk_core::groth16::Proof;
use cuzk_core::srs::{Parameters, ReadOptions, VerifyingKey};
use cuzk_core::Fr;
use std::path::Path;

pub fn read_params(path: &Path, trusted: bool) -> Result<Parameters> {
    let opts = if trusted { ReadOptions::trusted() } else { ReadOptions::default() };
    Parameters::read_file(path, opts).with_context(|| format!("reading params {}", path.display()))
}

/// A verifying key from a `.vk` file, or the VK prefix of a `.params` file.
pub fn read_vk(path: &Path) -> Result<VerifyingKey> {
    if path.extension().is_some_and(|e| e == "params") {
        return Ok(read_params(path, false)?.vk);
    }
    VerifyingKey::read_file(path, ReadOptions::default()).with_context(|| format!("reading vk {}", path.display()))
}

pub fn write_proofs(path: &Path, proofs: &[Proof]) -> Result<()> {
    let bytes: Vec<u8> = proofs.iter().flat_map(|p| p.to_bytes()).collect();
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

pub fn read_proofs(path: &Path) -> Result<Vec<Proof>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Proof::many_from_bytes(&bytes).with_context(|| format!("parsing proofs in {}", path.display()))
}

pub fn fr_to_hex(x: &Fr) -> String {
    let mut s = String::from("0x");
    for b in x.to_bytes_be() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

pub fn fr_from_hex(s: &str) -> Result<Fr> {
    let h = s.trim().strip_prefix("0x").unwrap_or(s.trim());
    if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("{s:?} is not 64 hex digits");
    }
    let mut b = [0u8; 32];
    for (i, out) in b.iter_mut().enumerate() {
        *out = u8::from_str_radix(&h[2 * i..2 * i + 2], 16)?;
    }
    Option::from(Fr::from_bytes_be(&b)).with_context(|| format!("{s} is not below the field modulus"))
}

pub fn write_inputs(path: &Path, inputs: &[Vec<Fr>]) -> Result<()> {
    let text: String = inputs.iter().map(|v| v.iter().map(fr_to_hex).collect::<Vec<_>>().join(",") + "\n").collect();
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

pub fn read_inputs(path: &Path) -> Result<Vec<Vec<Fr>>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            if line.trim().is_empty() {
                return Ok(vec![]);
            }
            line.split(',').map(fr_from_hex).collect::<Result<Vec<_>>>().with_context(|| format!("{} line {}", path.display(), i + 1))
        })
        .collect()
}
