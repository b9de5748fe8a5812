//! `cuzk filecoin-workload`: production-shape Filecoin inputs without a
//! sealed sector (see `cuzk_core::filecoin::workload`), deterministic in
//! the seed, written as Curio sends them, into `--out`:
//! - PoRep: `c1.json`, the request's `vanilla_proof`: the C1 output in
//!   Curio's `{"SectorNum","Phase1Out","SectorSize"}` envelope (what
//!   `cuzk single -t porep --c1` sends);
//! - WindowPoSt (one partition), WinningPoSt and SnapDeals:
//!   `vanilla.json`, the request's `vanilla_proofs` (bincode sector or
//!   partition proofs) as a JSON array of base64 strings (what
//!   `cuzk single -t wpost|winning|snap --vanilla` sends);
//! - `meta.json`: the public values a verifier needs (bytes as hex; what
//!   `cuzk filecoin-verify` reads), the request's registered proof number,
//!   and `cuzk_single`, the arguments of `cuzk single` that send the
//!   request (what `build/h200/fil-e2e.sh` runs).
//!
//! Each is checked before it is written: PoRep by filecoin-proofs' vanilla
//! verifier and the daemon's submit check, PoSt and SnapDeals by the
//! daemon's submit check (filecoin-proofs' vanilla verification).

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use cuzk_core::filecoin::workload::{porep, post, snap, PorepSpec, PostSpec, SnapSpec};
use cuzk_core::filecoin::{encode_envelope, parse_sector_size, prepare, ProofKind, ProofRequest, ProofType};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Proof kind: porep, snap, window or winning.
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
    let kind = ProofKind::from_name(&a.kind).ok_or_else(|| anyhow!("unknown kind {:?}: porep, snap, window or winning", a.kind))?;
    let size = parse_sector_size(&a.sector_size)
        .ok_or_else(|| anyhow!("unknown sector size {:?}: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB", a.sector_size))?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let t = Instant::now();
    let (written, single) = match kind {
        ProofKind::PorepSealCommit => write_porep(&a, size)?,
        ProofKind::WindowPostPartition | ProofKind::WinningPost => write_post(&a, kind, size)?,
        ProofKind::SnapDealsUpdate => write_snap(&a, size)?,
        ProofKind::Builtin | ProofKind::Custom => bail!("{kind} is not a Filecoin proof kind"),
    };
    println!("{written} and meta.json in {:.1} s, checked\n  prove it: cuzk single {}", t.elapsed().as_secs_f64(), single.join(" "));
    Ok(())
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> Result<String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    Ok(path.display().to_string())
}

fn write_porep(a: &Args, size: u64) -> Result<(String, Vec<String>)> {
    let w = porep(PorepSpec { sector_size: size, seed: a.seed, miner_id: a.miner_id, sector_num: a.sector_num })?;
    let c1 = &w.c1;
    let json = serde_json::to_vec(c1).context("serializing the C1 output")?;
    let path = write(&a.out, "c1.json", &encode_envelope(w.sector_num, size, &json))?;
    let single = args(&["-t", "porep", "--c1", &path, "--miner-id", &a.miner_id.to_string(), "--sector-num", &w.sector_num.to_string()]);
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
        "cuzk_single": single,
    });
    write(&a.out, "meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    Ok((format!("{:?}: wrote {path} (C1 output, {} bytes, in Curio's envelope)", w.registered_proof, json.len()), single))
}

fn write_post(a: &Args, kind: ProofKind, size: u64) -> Result<(String, Vec<String>)> {
    let spec = PostSpec { kind, sector_size: size, seed: a.seed, miner_id: a.miner_id, first_sector: a.sector_num, sectors: a.sectors };
    let w = post(spec)?;
    let mut req = ProofRequest::new(kind, a.miner_id);
    req.randomness = w.randomness.to_vec();
    req.vanilla_proofs = w.vanilla_proofs.clone();
    let (number, path) = check_and_write_vanilla(a, req, size)?;
    let (name, flag) = if kind == ProofKind::WinningPost { ("winning", "winning") } else { ("window", "wpost") };
    let (number_s, rand, miner) = (number.to_string(), hex(&w.randomness), a.miner_id.to_string());
    let single = args(&["-t", flag, "--vanilla", &path, "--registered-proof", &number_s, "--randomness", &rand, "--miner-id", &miner]);
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
        "cuzk_single": single,
    });
    write(&a.out, "meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    Ok((format!("{:?}: wrote {path} ({} sector proofs)", w.registered_proof, w.vanilla_proofs.len()), single))
}

fn write_snap(a: &Args, size: u64) -> Result<(String, Vec<String>)> {
    let w = snap(SnapSpec { sector_size: size, seed: a.seed })?;
    let mut req = ProofRequest::new(ProofKind::SnapDealsUpdate, a.miner_id);
    req.comm_r_old = w.comm_r_old.to_vec();
    req.comm_r_new = w.comm_r_new.to_vec();
    req.comm_d_new = w.comm_d_new.to_vec();
    req.vanilla_proofs = w.vanilla_proofs.clone();
    let (number, path) = check_and_write_vanilla(a, req, size)?;
    let (r_old, r_new, d_new) = (hex(&w.comm_r_old), hex(&w.comm_r_new), hex(&w.comm_d_new));
    let number_s = number.to_string();
    let single = args(&[
        "-t",
        "snap",
        "--vanilla",
        &path,
        "--registered-proof",
        &number_s,
        "--comm-r-old",
        &r_old,
        "--comm-r-new",
        &r_new,
        "--comm-d-new",
        &d_new,
    ]);
    let meta = json!({
        "kind": "snap",
        "registered_proof": format!("{:?}", w.registered_proof),
        "registered_proof_number": number,
        "sector_size": size,
        "seed": a.seed,
        "comm_r_old": r_old,
        "comm_r_new": r_new,
        "comm_d_new": d_new,
        "cuzk_single": single,
    });
    write(&a.out, "meta.json", serde_json::to_string_pretty(&meta)?.as_bytes())?;
    Ok((format!("{:?}: wrote {path} ({} partition proofs)", w.registered_proof, w.vanilla_proofs.len()), single))
}

/// Runs the daemon's submit check (filecoin-proofs' vanilla verification)
/// on `req` for the current registered proof of its kind and `size`, then
/// writes its vanilla proofs as `vanilla.json`. Returns the registered
/// proof number and the file's path.
fn check_and_write_vanilla(a: &Args, mut req: ProofRequest, size: u64) -> Result<(u64, String)> {
    let number = ProofType::current_number(req.kind, size)?;
    req.registered_proof = number;
    req.sector_size = size;
    prepare(&req).context("the generated vanilla proofs fail the submit check")?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let vanilla: Vec<String> = req.vanilla_proofs.iter().map(|v| b64.encode(v)).collect();
    Ok((number, write(&a.out, "vanilla.json", &serde_json::to_vec(&vanilla)?)?))
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
