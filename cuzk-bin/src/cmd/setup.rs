//! `cuzk setup`: random-toxic-waste parameters for a built-in circuit.

use crate::progress;
use anyhow::{Context, Result};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{generate_parameters, ToxicWaste};
use cuzk_core::srs::Parameters;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Circuit: sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>].
    #[arg(long)]
    pub circuit: CircuitSpec,
    /// Output .params file.
    #[arg(long)]
    pub params: PathBuf,
    /// Output .vk file (default: the params path with extension .vk).
    #[arg(long)]
    pub vk: Option<PathBuf>,
}

/// Generates parameters with a progress bar; returns them with the time.
pub fn generate(spec: &CircuitSpec) -> Result<(Parameters, f64)> {
    let t = Instant::now();
    let pb = progress::bar(0, "setup");
    let tick = |done: usize, total: usize| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    };
    let tw = ToxicWaste::random(&mut rand_core::OsRng);
    let params = generate_parameters(spec.blank(), &tw, Some(&tick)).with_context(|| format!("setup of {spec}"))?;
    pb.finish_and_clear();
    Ok((params, t.elapsed().as_secs_f64()))
}

pub fn write(params: &Parameters, params_path: &Path, vk_path: &Path) -> Result<()> {
    params.write_file(params_path).with_context(|| format!("writing {}", params_path.display()))?;
    params.vk.write_file(vk_path).with_context(|| format!("writing {}", vk_path.display()))
}

pub fn run(a: Args) -> Result<()> {
    let (params, secs) = generate(&a.circuit)?;
    let vk = a.vk.unwrap_or_else(|| a.params.with_extension("vk"));
    write(&params, &a.params, &vk)?;
    println!(
        "setup {}: {} constraints domain, {} inputs, {} aux; {:.2} s; wrote {} ({:.1} MiB) and {}",
        a.circuit,
        params.h.len() + 1,
        params.num_inputs(),
        params.l.len(),
        secs,
        a.params.display(),
        params.size_bytes() as f64 / (1 << 20) as f64,
        vk.display()
    );
    Ok(())
}
