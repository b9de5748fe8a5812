//! `cuzk filecoin-verify`: a proof of a `cuzk filecoin-workload` input
//! checked by filecoin-proofs' own verifier (`verify_seal`,
//! `verify_window_post`, `verify_winning_post`,
//! `verify_empty_sector_update_proof`) with the `.vk` of a param cache, as
//! the chain would check it. The public values come from the workload's
//! `meta.json`. Exit status 0 when valid, 1 when not, 2 on bad input.

use super::verify::Invalid;
use anyhow::{anyhow, bail, Context, Result};
use cuzk_core::filecoin::filecoin_proofs_api::post::{verify_window_post, verify_winning_post};
use cuzk_core::filecoin::filecoin_proofs_api::seal::verify_seal;
use cuzk_core::filecoin::filecoin_proofs_api::update::verify_empty_sector_update_proof;
use cuzk_core::filecoin::filecoin_proofs_api::{PublicReplicaInfo, SectorId};
use cuzk_core::filecoin::{ParamCache, ProofKind, ProofType};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The workload folder (`cuzk filecoin-workload --out`): its meta.json.
    #[arg(long)]
    pub workload: PathBuf,
    /// The proof bytes (`cuzk single --out`).
    #[arg(long)]
    pub proof: PathBuf,
    /// The param cache holding the circuit's `v28-<circuit-id>.vk`.
    #[arg(long)]
    pub param_cache: PathBuf,
}

pub fn run(a: Args) -> Result<()> {
    let meta_path = a.workload.join("meta.json");
    let text = std::fs::read_to_string(&meta_path).with_context(|| format!("reading {}", meta_path.display()))?;
    let meta = Meta(serde_json::from_str(&text).with_context(|| format!("{} is not JSON", meta_path.display()))?);
    let proof = std::fs::read(&a.proof).with_context(|| format!("reading {}", a.proof.display()))?;
    let kind = meta.str("kind")?;
    let kind = ProofKind::from_name(kind).ok_or_else(|| anyhow!("meta.json: unknown kind {kind:?}"))?;
    let pt = ProofType::for_kind(kind, meta.u64("registered_proof_number")?)?;
    let vk = ParamCache::new(&a.param_cache).files_for(pt)?.vk;
    if !vk.is_file() {
        bail!("{} is missing: filecoin-proofs' verifier needs the circuit's .vk", vk.display());
    }
    // filecoin-proofs reads its settings once, at the first call into it.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &a.param_cache);
    let t = Instant::now();
    let (verifier, ok) = match pt {
        ProofType::Seal(rp) => {
            let sector = SectorId::from(meta.u64("sector_num")?);
            let (comm_r, comm_d, prover) = (meta.bytes32("comm_r")?, meta.bytes32("comm_d")?, meta.bytes32("prover_id")?);
            let (ticket, seed) = (meta.bytes32("ticket")?, meta.bytes32("seed_randomness")?);
            ("verify_seal", verify_seal(rp, comm_r, comm_d, prover, sector, ticket, seed, &proof))
        }
        ProofType::Post(rp) => {
            let mut replicas = BTreeMap::new();
            for s in meta.0["sectors"].as_array().context("meta.json: no \"sectors\" array")? {
                let s = Meta(s.clone());
                replicas.insert(SectorId::from(s.u64("sector_num")?), PublicReplicaInfo::new(rp, s.bytes32("comm_r")?));
            }
            let (rand, prover) = (meta.bytes32("randomness")?, meta.bytes32("prover_id")?);
            match kind {
                ProofKind::WinningPost => ("verify_winning_post", verify_winning_post(&rand, &proof, &replicas, prover)),
                _ => ("verify_window_post", verify_window_post(&rand, &[(rp, proof.as_slice())], &replicas, prover)),
            }
        }
        ProofType::Update(rp) => {
            let (r_old, r_new, d_new) = (meta.bytes32("comm_r_old")?, meta.bytes32("comm_r_new")?, meta.bytes32("comm_d_new")?);
            ("verify_empty_sector_update_proof", verify_empty_sector_update_proof(rp, &proof, r_old, r_new, d_new))
        }
    };
    let secs = t.elapsed().as_secs_f64();
    // filecoin-proofs answers Err for proofs that do not parse as well as
    // for missing keys: both mean this proof is not accepted.
    match ok {
        Ok(true) => {
            println!("{pt:?}: {verifier} accepts {} ({} bytes) in {secs:.2} s, with {}", a.proof.display(), proof.len(), vk.display());
            Ok(())
        }
        Ok(false) => Err(anyhow::Error::new(Invalid { index: 0 }).context(format!("{verifier} rejects {}", a.proof.display()))),
        Err(e) => Err(anyhow::Error::new(Invalid { index: 0 }).context(format!("{verifier} fails on {}: {e:#}", a.proof.display()))),
    }
}

/// The workload's meta.json.
struct Meta(Value);

impl Meta {
    fn str(&self, key: &str) -> Result<&str> {
        self.0[key].as_str().ok_or_else(|| anyhow!("meta.json: no string {key:?}"))
    }

    fn u64(&self, key: &str) -> Result<u64> {
        self.0[key].as_u64().ok_or_else(|| anyhow!("meta.json: no number {key:?}"))
    }

    fn bytes32(&self, key: &str) -> Result<[u8; 32]> {
        let s = self.str(key)?;
        let ok = s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
        if !ok {
            bail!("meta.json: {key:?} is not 32 bytes of hex");
        }
        Ok(std::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex digits")))
    }
}
