//! `cuzk demo`: the whole job on an embedded circuit: setup (cached under
//! a work folder), params written and read back with full validation, a
//! batch of proofs, verification, and a timing table.

use crate::{cmd, files};
use anyhow::{ensure, Result};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{self, prepare_verifying_key, verify_proofs_batch};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The embedded circuit.
    #[arg(long, default_value = "synthetic:2^16:8")]
    pub circuit: CircuitSpec,
    /// Proofs to make (one batch sharing the SRS).
    #[arg(long, default_value_t = 4)]
    pub proofs: u64,
    /// Folder for the generated params (reused across runs).
    #[arg(long, default_value = "target/cuzk-demo")]
    pub workdir: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    println!("cuzk demo: {} × {} on the CPU backend ({} threads; the GPU backend is not built yet)",
        a.proofs, a.circuit, cuzk_core::par::threads());
    std::fs::create_dir_all(&a.workdir)?;
    let name = a.circuit.to_string().replace(':', "-").replace('^', "p");
    let params_path = a.workdir.join(format!("{name}.params"));
    let vk_path = params_path.with_extension("vk");
    let mut rows: Vec<(String, f64)> = Vec::new();

    if !params_path.exists() || !vk_path.exists() {
        let (params, secs) = cmd::setup::generate(&a.circuit)?;
        cmd::setup::write(&params, &params_path, &vk_path)?;
        rows.push(("setup (random toxic waste)".into(), secs));
    }
    let t = Instant::now();
    // Our own file: on-curve checks only (subgroup checks cost ~50 µs a point).
    let params = files::read_params(&params_path, true)?;
    rows.push((format!("load params ({:.1} MiB, trusted)", params.size_bytes() as f64 / 1048576.0), t.elapsed().as_secs_f64()));

    let circuits: Vec<_> = (0..a.proofs).map(|i| a.circuit.instance(1000 + i)).collect();
    let inputs = circuits.iter().map(|c| c.public_inputs()).collect::<Result<Vec<_>, _>>()?;
    let t = Instant::now();
    let proofs = groth16::prove_batch(&params, circuits)?;
    let prove_s = t.elapsed().as_secs_f64();
    rows.push((format!("prove {} (synthesis included)", a.proofs), prove_s));

    let t = Instant::now();
    let pvk = prepare_verifying_key(&files::read_vk(&vk_path)?);
    let ok = verify_proofs_batch(&pvk, &proofs, &inputs, &mut rand_core::OsRng)?;
    rows.push(("batch verify".into(), t.elapsed().as_secs_f64()));
    ensure!(ok, "the proofs did not verify");

    println!("\n| {:<44} | {:>10} |", "step", "seconds");
    println!("|{:-<46}|{:->12}|", "", "");
    for (what, s) in &rows {
        println!("| {what:<44} | {s:>10.3} |");
    }
    println!("| {:<44} | {:>10.3} |", "per proof", prove_s / a.proofs as f64);
    println!("\nall {} proofs valid; params in {}", a.proofs, a.workdir.display());
    Ok(())
}
