//! `cuzk prove`: proofs of built-in circuit instances with a params file.

use crate::{files, progress};
use anyhow::{Context, Result};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Circuit: sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>].
    #[arg(long)]
    pub circuit: CircuitSpec,
    /// Parameters made for this circuit (cuzk setup).
    #[arg(long)]
    pub params: PathBuf,
    /// Skip the subgroup check of every point (only for trusted files).
    #[arg(long)]
    pub trusted_params: bool,
    /// Number of instances to prove as one batch (witness seeds seed..seed+count).
    #[arg(long, default_value_t = 1)]
    pub count: u64,
    /// Witness seed of the first instance.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output: concatenated 192-byte proofs.
    #[arg(long)]
    pub proof: PathBuf,
    /// Output: public inputs, one line per proof (default: proof path + .inputs).
    #[arg(long)]
    pub inputs: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let t = Instant::now();
    let params = files::read_params(&a.params, a.trusted_params)?;
    let load_s = t.elapsed().as_secs_f64();
    let circuits: Vec<_> = (0..a.count).map(|i| a.circuit.instance(a.seed + i)).collect();
    let inputs = circuits.iter().map(|c| c.public_inputs()).collect::<Result<Vec<_>, _>>()?;
    let sp = progress::spinner(&format!("proving {} × {}", a.count, a.circuit));
    let t = Instant::now();
    let proofs = groth16::prove_batch(&params, circuits).with_context(|| format!("proving {}", a.circuit))?;
    let prove_s = t.elapsed().as_secs_f64();
    sp.finish_and_clear();
    files::write_proofs(&a.proof, &proofs)?;
    let inputs_path = a.inputs.unwrap_or_else(|| PathBuf::from(format!("{}.inputs", a.proof.display())));
    files::write_inputs(&inputs_path, &inputs)?;
    println!(
        "proved {} × {}: params load {:.2} s, prove {:.2} s ({:.2} s/proof); wrote {} and {}",
        a.count,
        a.circuit,
        load_s,
        prove_s,
        prove_s / a.count as f64,
        a.proof.display(),
        inputs_path.display()
    );
    Ok(())
}
