//! `cuzk filecoin-workload`: production-shape Filecoin inputs without a
//! sealed sector (see `cuzk_core::filecoin::workload`), deterministic in
//! the seed, written as Curio sends them.
//!
//! PoRep writes into `--out`:
//! - `c1.json`: the request's `vanilla_proof`, the C1 output in Curio's
//!   `{"SectorNum","Phase1Out","SectorSize"}` envelope (what
//!   `cuzk single -t porep --c1` sends);
//! - `meta.json`: the public values a verifier needs (prover and miner id,
//!   sector number, registered proof, comm_r, comm_d, ticket, seed; bytes
//!   as hex).

use anyhow::{anyhow, bail, Context, Result};
use cuzk_core::filecoin::workload::{porep, PorepSpec};
use cuzk_core::filecoin::{encode_envelope, parse_sector_size, ProofKind};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Proof kind: porep (snap, window and winning are not generated yet).
    #[arg(long)]
    pub kind: String,
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long)]
    pub sector_size: String,
    /// Everything random (data, ticket, challenge seed, untouched subtrees) derives from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Folder to write into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Miner actor id: the prover id is Curio's for it.
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,
    #[arg(long, default_value_t = 1)]
    pub sector_num: u64,
}

pub fn run(a: Args) -> Result<()> {
    let kind = ProofKind::from_name(&a.kind).ok_or_else(|| anyhow!("unknown kind {:?}: porep, snap, window or winning", a.kind))?;
    let size = parse_sector_size(&a.sector_size)
        .ok_or_else(|| anyhow!("unknown sector size {:?}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB", a.sector_size))?;
    if kind != ProofKind::PorepSealCommit {
        bail!("--kind {}: only porep workloads are generated so far", a.kind);
    }
    let t = Instant::now();
    let w = porep(PorepSpec { sector_size: size, seed: a.seed, miner_id: a.miner_id, sector_num: a.sector_num })?;
    let c1 = &w.c1;
    let json = serde_json::to_vec(c1).context("serializing the C1 output")?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = a.out.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
    };
    write("c1.json", &encode_envelope(w.sector_num, size, &json))?;
    let meta = serde_json::json!({
        "kind": "porep",
        "registered_proof": format!("{:?}", w.registered_proof),
        "sector_size": size,
        "seed": a.seed,
        "miner_id": a.miner_id,
        "sector_num": w.sector_num,
        "prover_id": hex(&w.prover_id),
        "comm_r": hex(&c1.comm_r),
        "comm_d": hex(&c1.comm_d),
        "ticket": hex(&c1.ticket),
        "seed_randomness": hex(&c1.seed),
    });
    write("meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    println!(
        "{:?}: wrote {} (C1 output, {} bytes, in Curio's envelope) and meta.json in {:.1} s; checked with filecoin-proofs' vanilla verifier\n  prove it: cuzk single -t porep --c1 {} --miner-id {} --sector-num {}",
        w.registered_proof,
        a.out.join("c1.json").display(),
        json.len(),
        t.elapsed().as_secs_f64(),
        a.out.join("c1.json").display(),
        a.miner_id,
        w.sector_num
    );
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
