//! `cuzk filecoin-setup`: random-toxic-waste parameters for a Filecoin
//! circuit under its production file names (`v28-<circuit-id>.params|.vk`),
//! for tests and benchmarks. Never use them for real proofs.

use crate::progress;
use anyhow::{anyhow, Context, Result};
use cuzk_core::filecoin::{circuit_id, parse_sector_size, setup, ParamCache, ProofKind, ProofType};
use cuzk_core::groth16::ToxicWaste;
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
    if a.dry_run {
        println!("{pt:?}: {}\n  {}\n  {}", files.circuit_id, files.params.display(), files.vk.display());
        return Ok(());
    }
    let t = Instant::now();
    let pb = progress::bar(0, "setup");
    let tick = |done: usize, total: usize| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    };
    let tw = ToxicWaste::random(&mut rand_core::OsRng);
    let files = setup::generate_params(pt, &cache, &tw, Some(&tick)).with_context(|| format!("setup of {pt:?}"))?;
    pb.finish_and_clear();
    println!("{pt:?}: wrote {} and {} in {:.1} s", files.params.display(), files.vk.display(), t.elapsed().as_secs_f64());
    Ok(())
}
