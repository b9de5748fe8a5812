//! Curio's PoRep C2 input: `vanilla_proof` is the JSON object
//! `{"SectorNum": <i64>, "Phase1Out": <base64>, "SectorSize": <u64>}` where
//! Phase1Out is the serde_json of filecoin-proofs-api's
//! `SealCommitPhase1Output` (base64 because Go encodes []byte that way).

use super::error::{FilecoinError, Result};
use base64::Engine as _;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::Deserialize;

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "SectorNum")]
    sector_num: i64,
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    sector_size: u64,
}

/// A decoded PoRep request body.
pub struct C1Input {
    pub sector_num: u64,
    /// 0 = not given.
    pub sector_size: u64,
    pub phase1: SealCommitPhase1Output,
}

/// Decodes the envelope. An empty body, malformed JSON or base64, or a
/// Phase1Out that is not a C1 output are named errors.
pub fn decode_envelope(bytes: &[u8]) -> Result<C1Input> {
    if bytes.is_empty() {
        return Err(FilecoinError::EmptyVanillaProof { field: "vanilla_proof" });
    }
    let env: Envelope =
        serde_json::from_slice(bytes).map_err(|source| FilecoinError::Json { what: "vanilla_proof (the PoRep envelope)", source })?;
    if env.sector_num < 0 {
        return Err(FilecoinError::Inconsistent(format!("negative SectorNum {}", env.sector_num)));
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(env.phase1_out.as_bytes())
        .map_err(|source| FilecoinError::Base64 { what: "PoRep envelope Phase1Out", source })?;
    Ok(C1Input { sector_num: env.sector_num as u64, sector_size: env.sector_size, phase1: decode_c1(&raw)? })
}

/// The `vanilla_proof` of a PoRep request: Curio's envelope, or a bare C1
/// output (what `seal_commit_phase1` returns; bench tools send that, and
/// the daemon's wire check lets it through) for sector `sector_number`.
/// A body that is neither reports the envelope's error.
pub fn decode_porep_body(bytes: &[u8], sector_number: u64) -> Result<C1Input> {
    match decode_envelope(bytes) {
        Err(e @ FilecoinError::Json { .. }) => match decode_c1(bytes) {
            Ok(phase1) => Ok(C1Input { sector_num: sector_number, sector_size: 0, phase1 }),
            Err(_) => Err(e),
        },
        other => other,
    }
}

/// Decodes a bare `SealCommitPhase1Output` JSON (what `seal_commit_phase1` returns).
pub fn decode_c1(json: &[u8]) -> Result<SealCommitPhase1Output> {
    if json.is_empty() {
        return Err(FilecoinError::EmptyVanillaProof { field: "Phase1Out" });
    }
    serde_json::from_slice(json).map_err(|source| FilecoinError::Json { what: "SealCommitPhase1Output", source })
}

/// Wraps a C1 output the way Curio does (for tests and tools).
pub fn encode_envelope(sector_num: u64, sector_size: u64, phase1_json: &[u8]) -> Vec<u8> {
    serde_json::json!({
        "SectorNum": sector_num,
        "Phase1Out": base64::engine::general_purpose::STANDARD.encode(phase1_json),
        "SectorSize": sector_size,
    })
    .to_string()
    .into_bytes()
}
