//! `cuzk verify`: proofs against a verifying key and public inputs. Exit
//! status 0 when every proof is valid, 1 when one is not, 2 on bad input.

use crate::files;
use anyhow::{bail, Result};
use cuzk_core::groth16::{prepare_verifying_key, verify_proof};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The verifying key (.vk) or the parameters (.params).
    #[arg(long)]
    pub vk: PathBuf,
    /// Concatenated 192-byte proofs.
    #[arg(long)]
    pub proof: PathBuf,
    /// Public inputs, one line per proof (default: proof path + .inputs).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
}

/// A proof that parsed but did not verify (exit status 1).
#[derive(Debug, thiserror::Error)]
#[error("proof {index} is INVALID")]
pub struct Invalid {
    pub index: usize,
}

pub fn run(a: Args) -> Result<()> {
    let pvk = prepare_verifying_key(&files::read_vk(&a.vk)?);
    let proofs = files::read_proofs(&a.proof)?;
    let inputs_path = a.inputs.unwrap_or_else(|| PathBuf::from(format!("{}.inputs", a.proof.display())));
    let inputs = files::read_inputs(&inputs_path)?;
    if inputs.len() != proofs.len() {
        bail!("{} proofs in {} but {} input lines in {}", proofs.len(), a.proof.display(), inputs.len(), inputs_path.display());
    }
    for (index, (p, x)) in proofs.iter().zip(&inputs).enumerate() {
        if !verify_proof(&pvk, p, x)? {
            return Err(Invalid { index }.into());
        }
    }
    println!("{} proof(s) valid", proofs.len());
    Ok(())
}
