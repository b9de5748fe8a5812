//! `cuzk setup`: parameters for a built-in circuit or for any recorded
//! R1CS (`.pce`), from random or seeded toxic waste, streamed to the
//! `.params` file as they are computed.

use crate::progress;
use anyhow::{bail, Context, Result};
use cuzk_core::arith::fixed_base::Device;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::groth16::{generate_parameters, write_parameters, ToxicWaste};
use cuzk_core::pce::{self, Pce};
use cuzk_core::srs::Parameters;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Circuit: sha256:<blocks>, mimc:<hashes> or synthetic:<constraints>[:<inputs>].
    #[arg(long, required_unless_present = "pce", conflicts_with = "pce")]
    pub circuit: Option<CircuitSpec>,
    /// A recorded R1CS (`cuzk pce build`, or the engine's `<circuit-id>.pce`)
    /// to make the parameters of, instead of --circuit.
    #[arg(long)]
    pub pce: Option<PathBuf>,
    /// Output .params file.
    #[arg(long)]
    pub params: PathBuf,
    /// Output .vk file (default: the params path with extension .vk).
    #[arg(long)]
    pub vk: Option<PathBuf>,
    /// Derive the toxic waste from this seed (reproducible test parameters;
    /// never for production). Default: random.
    #[arg(long)]
    pub toxic_seed: Option<u64>,
    /// Multiply on the CPU even when a GPU is present (for comparison).
    #[arg(long)]
    pub cpu: bool,
}

/// Toxic waste from `seed`, or random.
pub fn toxic_waste(seed: Option<u64>) -> ToxicWaste {
    seed.map_or_else(|| ToxicWaste::random(&mut rand_core::OsRng), ToxicWaste::from_seed)
}

/// A progress bar fed by the setup's (done, total) callback.
pub fn with_progress<T>(f: impl FnOnce(&(dyn Fn(usize, usize) + Sync)) -> T) -> T {
    let pb = progress::bar(0, "setup");
    let tick = |done: usize, total: usize| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    };
    let out = f(&tick);
    pb.finish_and_clear();
    out
}

/// Generates parameters in memory with a progress bar; returns them with the time.
pub fn generate(spec: &CircuitSpec) -> Result<(Parameters, f64)> {
    let t = Instant::now();
    let tw = toxic_waste(None);
    let params = with_progress(|tick| generate_parameters(spec.blank(), &tw, Some(tick))).with_context(|| format!("setup of {spec}"))?;
    Ok((params, t.elapsed().as_secs_f64()))
}

pub fn write(params: &Parameters, params_path: &Path, vk_path: &Path) -> Result<()> {
    params.write_file(params_path).with_context(|| format!("writing {}", params_path.display()))?;
    params.vk.write_file(vk_path).with_context(|| format!("writing {}", vk_path.display()))
}

fn load(a: &Args) -> Result<(Pce, String)> {
    match (&a.circuit, &a.pce) {
        (Some(spec), _) => Ok((pce::record("setup", spec.blank()).with_context(|| format!("recording {spec}"))?, spec.to_string())),
        (None, Some(path)) => {
            let p = pce::file::read(path).with_context(|| format!("reading {}", path.display()))?;
            let what = format!("{} ({})", p.circuit_id, path.display());
            Ok((p, what))
        }
        (None, None) => bail!("give --circuit or --pce"),
    }
}

pub fn run(a: Args) -> Result<()> {
    let t = Instant::now();
    let (pce, what) = load(&a)?;
    let (constraints, inputs, aux) = (pce.num_constraints(), pce.shape.num_inputs, pce.shape.num_aux);
    let recorded = t.elapsed().as_secs_f64();
    let vk = a.vk.clone().unwrap_or_else(|| a.params.with_extension("vk"));
    let tw = toxic_waste(a.toxic_seed);
    let device = if a.cpu { Device::Cpu } else { Device::detect() };
    with_progress(|tick| write_parameters(pce, &tw, Some(tick), device, &a.params, &vk)).with_context(|| format!("setup of {what}"))?;
    let size = std::fs::metadata(&a.params).map_or(0, |m| m.len());
    println!(
        "setup {what} on {device:?}: {constraints} constraints, {inputs} inputs, {aux} aux; R1CS in {recorded:.2} s, total {:.2} s; wrote {} ({:.1} MiB) and {}",
        t.elapsed().as_secs_f64(),
        a.params.display(),
        super::pce::mib(size),
        vk.display()
    );
    Ok(())
}
