//! `cuzk filecoin-setup`: parameters from random or seeded toxic waste for
//! a Filecoin circuit under its production file names
//! (`v28-<circuit-id>.params|.vk`), from the circuit or its recorded R1CS,
//! streamed to disk, for tests and benchmarks. Never use them for real
//! proofs.

use super::pce::mib;
use super::setup::{toxic_waste, with_progress};
use anyhow::{anyhow, Context, Result};
use cuzk_core::arith::fixed_base::Device;
use cuzk_core::engine::pce_store::PceStore;
use cuzk_core::filecoin::{circuit_id, parse_sector_size, setup, ParamCache, ProofKind, ProofType};
use cuzk_core::pce;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Proof kind: porep, snap, window or winning.
    #[arg(long)]
    pub kind: String,
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long, default_value = "2KiB")]
    pub sector_size: String,
    /// Param cache folder to write into.
    #[arg(long)]
    pub param_cache: PathBuf,
    /// The circuit's recorded R1CS (`<circuit-id>.pce`, as the engine keeps
    /// it): skips recording the circuit. Default: record it now.
    #[arg(long, conflicts_with = "save_pce")]
    pub pce: Option<PathBuf>,
    /// Also write the recorded R1CS as `<circuit-id>.pce` into the param
    /// cache, where the daemon's engine loads it instead of recording it
    /// at its first proof.
    #[arg(long)]
    pub save_pce: bool,
    /// Derive the toxic waste from this seed (reproducible). Default: random.
    #[arg(long)]
    pub toxic_seed: Option<u64>,
    /// Multiply on the CPU even when a GPU is present (for comparison).
    #[arg(long)]
    pub cpu: bool,
    /// Only print the circuit id and file names.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(a: Args) -> Result<()> {
    let kind = ProofKind::from_name(&a.kind).ok_or_else(|| anyhow!("unknown kind {:?}: porep, snap, window or winning", a.kind))?;
    let size = parse_sector_size(&a.sector_size)
        .ok_or_else(|| anyhow!("unknown sector size {:?}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB", a.sector_size))?;
    let pt = ProofType::current(kind, size)?;
    let cache = ParamCache::new(&a.param_cache);
    let files = cache.files(&circuit_id(pt)?);
    let pce_path = PceStore::path_of(&cache.dir, &files.circuit_id);
    if a.dry_run {
        println!("{pt:?}: {}\n  {}\n  {}\n  {}", files.circuit_id, files.params.display(), files.vk.display(), pce_path.display());
        return Ok(());
    }
    let t = Instant::now();
    let pce = match &a.pce {
        Some(path) => pce::file::read(path).with_context(|| format!("reading {}", path.display()))?,
        None => setup::record_blank(pt).with_context(|| format!("recording the circuit of {pt:?}"))?,
    };
    println!(
        "{pt:?}: R1CS of {} constraints, {} inputs, {} aux {} in {:.1} s",
        pce.num_constraints(),
        pce.shape.num_inputs,
        pce.shape.num_aux,
        if a.pce.is_some() { "read" } else { "recorded" },
        t.elapsed().as_secs_f64()
    );
    let layout = cuzk_core::groth16::params_layout(&pce).with_context(|| format!("the domain of {pt:?}"))?;
    println!("  .params of up to {:.1} MiB", mib(layout.file_bytes()));
    if a.save_pce {
        let t = Instant::now();
        std::fs::create_dir_all(&cache.dir).with_context(|| format!("creating {}", cache.dir.display()))?;
        pce::file::write(&pce, &pce_path)?;
        let size = std::fs::metadata(&pce_path).map_or(0, |m| m.len());
        println!("  wrote {} ({:.1} MiB) in {:.1} s", pce_path.display(), mib(size), t.elapsed().as_secs_f64());
    }
    let t = Instant::now();
    let tw = toxic_waste(a.toxic_seed);
    let device = if a.cpu { Device::Cpu } else { Device::detect() };
    let files = with_progress(|tick| setup::generate_params_from_pce(pt, &cache, pce, &tw, Some(tick), device))
        .with_context(|| format!("setup of {pt:?}"))?;
    let size = std::fs::metadata(&files.params).map_or(0, |m| m.len());
    println!(
        "  setup on {device:?}: wrote {} ({:.1} MiB) and {} in {:.1} s",
        files.params.display(),
        mib(size),
        files.vk.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
