//! `cuzk filecoin-workload`: production-shape Filecoin inputs without a
//! sealed sector (see `cuzk_core::filecoin::workload`), deterministic in
//! the seed, written as Curio sends them, into `--out`:
//! - PoRep: `c1.json`, the request's `vanilla_proof`: the C1 output in
//!   Curio's `{"SectorNum","Phase1Out","SectorSize"}` envelope (what
//!   `cuzk single -t porep --c1` sends);
//! - WindowPoSt (one partition) and WinningPoSt: `vanilla.json`, the
//!   request's `vanilla_proofs` (bincode sector proofs) as a JSON array of
//!   base64 strings (what `cuzk single -t wpost|winning --vanilla` sends);
//! - `meta.json`: the public values a verifier needs (bytes as hex) and
//!   the request's registered proof number.
//!
//! Each is checked before it is written: PoRep by filecoin-proofs' vanilla
//! verifier and the daemon's submit check, PoSt by the daemon's submit
//! check (filecoin-proofs' vanilla PoSt verification).

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use cuzk_core::filecoin::workload::{porep, post, PorepSpec, PostSpec};
use cuzk_core::filecoin::{encode_envelope, parse_sector_size, prepare, ProofKind, ProofRequest, ProofType};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Proof kind: porep, window or winning (snap is not generated yet).
    #[arg(long)]
    pub kind: String,
    /// Sector size: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long)]
    pub sector_size: String,
    /// Everything random (data, ticket, seeds, randomness, untouched subtrees) derives from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Folder to write into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Miner actor id: the prover id is Curio's for it.
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,
    /// The sector number (PoSt: the first sector's; the others count up).
    #[arg(long, default_value_t = 1)]
    pub sector_num: u64,
    /// WindowPoSt: sectors in the partition (0: a full partition, 2349 at 32 GiB).
    #[arg(long, default_value_t = 0)]
    pub sectors: usize,
}

pub fn run(a: Args) -> Result<()> {
    let kind = ProofKind::from_name(&a.kind).ok_or_else(|| anyhow!("unknown kind {:?}: porep, window or winning", a.kind))?;
    let size = parse_sector_size(&a.sector_size)
        .ok_or_else(|| anyhow!("unknown sector size {:?}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB", a.sector_size))?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let t = Instant::now();
    let (written, prove) = match kind {
        ProofKind::PorepSealCommit => write_porep(&a, size)?,
        ProofKind::WindowPostPartition | ProofKind::WinningPost => write_post(&a, kind, size)?,
        ProofKind::SnapDealsUpdate => bail!("--kind {}: SnapDeals workloads are not generated yet", a.kind),
    };
    println!("{written} and meta.json in {:.1} s, checked\n  prove it: {prove}", t.elapsed().as_secs_f64());
    Ok(())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    Ok(path.display().to_string())
}

fn write_porep(a: &Args, size: u64) -> Result<(String, String)> {
    let w = porep(PorepSpec { sector_size: size, seed: a.seed, miner_id: a.miner_id, sector_num: a.sector_num })?;
    let c1 = &w.c1;
    let json = serde_json::to_vec(c1).context("serializing the C1 output")?;
    let path = write(&a.out, "c1.json", &encode_envelope(w.sector_num, size, &json))?;
    let meta = json!({
        "kind": "porep",
        "registered_proof": format!("{:?}", w.registered_proof),
        "registered_proof_number": ProofType::current_number(ProofKind::PorepSealCommit, size)?,
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
    write(&a.out, "meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    Ok((
        format!("{:?}: wrote {path} (C1 output, {} bytes, in Curio's envelope)", w.registered_proof, json.len()),
        format!("cuzk single -t porep --c1 {path} --miner-id {} --sector-num {}", a.miner_id, w.sector_num),
    ))
}

fn write_post(a: &Args, kind: ProofKind, size: u64) -> Result<(String, String)> {
    let spec = PostSpec { kind, sector_size: size, seed: a.seed, miner_id: a.miner_id, first_sector: a.sector_num, sectors: a.sectors };
    let w = post(spec)?;
    let number = ProofType::current_number(kind, size)?;
    // The daemon's submit check: filecoin-proofs' vanilla PoSt verification.
    let mut req = ProofRequest::new(kind, a.miner_id);
    req.registered_proof = number;
    req.sector_size = size;
    req.randomness = w.randomness.to_vec();
    req.vanilla_proofs = w.vanilla_proofs.clone();
    prepare(&req).context("the generated PoSt vanilla proofs fail the submit check")?;

    let b64 = base64::engine::general_purpose::STANDARD;
    let vanilla: Vec<String> = w.vanilla_proofs.iter().map(|v| b64.encode(v)).collect();
    let path = write(&a.out, "vanilla.json", &serde_json::to_vec(&vanilla)?)?;
    let (name, flag) = if kind == ProofKind::WinningPost { ("winning", "winning") } else { ("window", "wpost") };
    let meta = json!({
        "kind": name,
        "registered_proof": format!("{:?}", w.registered_proof),
        "registered_proof_number": number,
        "sector_size": size,
        "seed": a.seed,
        "miner_id": a.miner_id,
        "partition_index": 0,
        "prover_id": hex(&w.prover_id),
        "randomness": hex(&w.randomness),
        "sectors": w.sectors.iter().map(|(n, comm_r)| json!({"sector_num": n, "comm_r": hex(comm_r)})).collect::<Vec<_>>(),
    });
    write(&a.out, "meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    Ok((
        format!("{:?}: wrote {path} ({} sector proofs)", w.registered_proof, w.vanilla_proofs.len()),
        format!(
            "cuzk single -t {flag} --vanilla {path} --registered-proof {number} --randomness {} --miner-id {}",
            hex(&w.randomness),
            a.miner_id
        ),
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
