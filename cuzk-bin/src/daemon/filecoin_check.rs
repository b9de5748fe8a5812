//! Wire-level checks of Filecoin requests before they reach the engine:
//! the registered proof number exists for the kind, its sector size agrees
//! with `sector_size`, the vanilla proof(s) are present and well-formed as
//! far as can be told without the circuits, and fixed-size fields have
//! their size. Every error names the field and what is wrong.

use cuzk_core::engine::{FilecoinInputs, ProofKind};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// Sector sizes in the order of the registered proof enums' size groups.
const SIZES: [u64; 5] = [2 * KIB, 8 * MIB, 512 * MIB, 32 * GIB, 64 * GIB];

/// The name and sector size of a registered proof number of `kind`
/// (filecoin-proofs-api / go-state-types numbering).
pub fn registered_proof(kind: ProofKind, n: u64) -> Option<(String, u64)> {
    let size = |i: u64| SIZES[(i % 5) as usize];
    let name = |prefix: &str, i: u64, suffix: &str| format!("{prefix}{}{suffix}", size_name(size(i)));
    match kind {
        // RegisteredSealProof: V1 0-4, V1_1 5-9, V1_1_Feat_SyntheticPoRep 10-14, V1_2_Feat_NiPoRep 15-19.
        ProofKind::PorepSealCommit if n < 20 => {
            let suffix = ["V1", "V1_1", "V1_1_Feat_SyntheticPoRep", "V1_2_Feat_NiPoRep"][(n / 5) as usize];
            Some((name("StackedDrg", n, suffix), size(n)))
        }
        // RegisteredPoStProof: Winning 0-4, Window V1 5-9, Window V1_1 10-14.
        ProofKind::WinningPost if n < 5 => Some((name("StackedDrgWinning", n, "V1"), size(n))),
        ProofKind::WindowPostPartition if (5..15).contains(&n) => {
            Some((name("StackedDrgWindow", n, if n < 10 { "V1" } else { "V1_1" }), size(n)))
        }
        // RegisteredUpdateProof: 0-4.
        ProofKind::SnapDealsUpdate if n < 5 => Some((name("StackedDrg", n, "V1"), size(n))),
        _ => None,
    }
}

fn size_name(bytes: u64) -> String {
    match bytes {
        b if b >= GIB => format!("{}GiB", b / GIB),
        b if b >= MIB => format!("{}MiB", b / MIB),
        b => format!("{}KiB", b / KIB),
    }
}

fn valid_numbers(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PorepSealCommit => "0-19 (RegisteredSealProof)",
        ProofKind::WinningPost => "0-4 (RegisteredPoStProof, winning)",
        ProofKind::WindowPostPartition => "5-14 (RegisteredPoStProof, window)",
        _ => "0-4 (RegisteredUpdateProof)",
    }
}

/// Checks a Filecoin request; the error says which field is wrong and why.
pub fn check(kind: ProofKind, i: &FilecoinInputs) -> Result<(), String> {
    let (proof_name, proof_size) = match (kind, i.registered_proof) {
        // The existing daemon takes a PoRep's seal proof from its C1 output
        // and its bench tool sends 0 with the sector size: 0 with a size
        // other than 2 KiB (0's own) means the C1 output's proof of that size.
        (ProofKind::PorepSealCommit, 0) if i.sector_size != SIZES[0] && SIZES.contains(&i.sector_size) => {
            ("the C1 output's seal proof".to_string(), i.sector_size)
        }
        _ => registered_proof(kind, i.registered_proof).ok_or_else(|| {
            format!("registered_proof {} is not a {kind} proof type (valid: {})", i.registered_proof, valid_numbers(kind))
        })?,
    };
    if i.sector_size != 0 && i.sector_size != proof_size {
        return Err(format!(
            "sector_size {} ({}) does not match registered_proof {} ({proof_name}, {} sectors)",
            i.sector_size,
            size_name(i.sector_size),
            i.registered_proof,
            size_name(proof_size)
        ));
    }
    match kind {
        ProofKind::PorepSealCommit => check_c1(&i.vanilla_proof, proof_size)?,
        _ => check_vanilla_list(&i.vanilla_proofs)?,
    }
    match kind {
        ProofKind::WindowPostPartition | ProofKind::WinningPost => exact_len("randomness", &i.randomness, 32)?,
        ProofKind::SnapDealsUpdate => {
            exact_len("comm_r_old", &i.comm_r_old, 32)?;
            exact_len("comm_r_new", &i.comm_r_new, 32)?;
            exact_len("comm_d_new", &i.comm_d_new, 32)?;
        }
        _ => {}
    }
    Ok(())
}

fn exact_len(field: &str, v: &[u8], n: usize) -> Result<(), String> {
    if v.len() != n {
        return Err(format!("{field} must be {n} bytes, got {}", v.len()));
    }
    Ok(())
}

fn check_vanilla_list(proofs: &[Vec<u8>]) -> Result<(), String> {
    if proofs.is_empty() {
        return Err("vanilla_proofs is empty (this proof kind needs one vanilla proof per sector or partition)".into());
    }
    if let Some(i) = proofs.iter().position(|p| p.is_empty()) {
        return Err(format!("vanilla_proofs[{i}] is empty"));
    }
    Ok(())
}

/// The PoRep C1 output as Curio sends it: a JSON object
/// `{"SectorNum": n, "Phase1Out": "<base64 of the phase-1 JSON>", "SectorSize": n}`
/// (a bare SealCommitPhase1Output JSON object is accepted too).
fn check_c1(bytes: &[u8], proof_size: u64) -> Result<(), String> {
    if bytes.is_empty() {
        return Err("vanilla_proof is empty (PoRep needs the C1 output JSON)".into());
    }
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("vanilla_proof is not valid JSON: {e}"))?;
    let obj = v.as_object().ok_or("vanilla_proof must be a JSON object with SectorNum, Phase1Out and SectorSize")?;
    if !obj.contains_key("Phase1Out") && obj.contains_key("vanilla_proofs") {
        return Ok(()); // a bare SealCommitPhase1Output
    }
    let phase1 = obj
        .get("Phase1Out")
        .and_then(|p| p.as_str())
        .ok_or("vanilla_proof has no Phase1Out string (base64 of the SealCommitPhase1Output JSON)")?;
    let decoded = base64_decode(phase1).map_err(|e| format!("vanilla_proof Phase1Out is not base64: {e}"))?;
    serde_json::from_slice::<serde_json::Value>(&decoded)
        .map_err(|e| format!("vanilla_proof Phase1Out does not decode to JSON (corrupt C1 output?): {e}"))?;
    if let Some(s) = obj.get("SectorSize") {
        let s = s.as_u64().ok_or("vanilla_proof SectorSize is not an unsigned integer")?;
        if s != proof_size {
            return Err(format!("vanilla_proof SectorSize {s} does not match the registered proof's {} sectors", size_name(proof_size)));
        }
    }
    if obj.get("SectorNum").is_some_and(|n| !n.is_i64() && !n.is_u64()) {
        return Err("vanilla_proof SectorNum is not an integer".into());
    }
    Ok(())
}

/// Standard base64 (with or without padding).
pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    let s = s.trim();
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(s.trim_end_matches('=')))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn porep(vanilla: &[u8], size: u64, reg: u64) -> Result<(), String> {
        check(ProofKind::PorepSealCommit, &FilecoinInputs { sector_size: size, registered_proof: reg, vanilla_proof: vanilla.to_vec(), ..Default::default() })
    }

    #[test]
    fn registered_proofs() {
        assert_eq!(registered_proof(ProofKind::PorepSealCommit, 8), Some(("StackedDrg32GiBV1_1".into(), 32 * GIB)));
        assert_eq!(registered_proof(ProofKind::WindowPostPartition, 13), Some(("StackedDrgWindow32GiBV1_1".into(), 32 * GIB)));
        assert_eq!(registered_proof(ProofKind::WinningPost, 3).unwrap().1, 32 * GIB);
        assert_eq!(registered_proof(ProofKind::WinningPost, 5), None);
        assert_eq!(registered_proof(ProofKind::SnapDealsUpdate, 0).unwrap().1, 2 * KIB);
    }

    #[test]
    fn porep_checks() {
        let good = br#"{"SectorNum":1,"Phase1Out":"eyJhIjoxfQ==","SectorSize":2048}"#;
        assert_eq!(porep(good, 2048, 0), Ok(()));
        assert_eq!(porep(good, 0, 5), Ok(()));
        assert!(porep(good, 34359738368, 0).unwrap_err().contains("SectorSize 2048 does not match"));
        let good_32g = br#"{"SectorNum":1,"Phase1Out":"eyJhIjoxfQ==","SectorSize":34359738368}"#;
        assert_eq!(porep(good_32g, 34359738368, 0), Ok(()), "registered proof 0 with the sector size, as the existing bench tool sends");
        assert!(porep(good_32g, 0, 0).unwrap_err().contains("SectorSize 34359738368 does not match"));
        assert!(porep(good, 12345, 0).unwrap_err().contains("sector_size 12345"));
        assert!(porep(good, 0, 8).unwrap_err().contains("SectorSize 2048"));
        assert!(porep(b"", 0, 0).unwrap_err().contains("empty"));
        assert!(porep(b"{not json", 0, 0).unwrap_err().contains("not valid JSON"));
        assert!(porep(br#"{"Phase1Out":"!!!"}"#, 0, 0).unwrap_err().contains("not base64"));
        assert!(porep(br#"{"Phase1Out":"aGVsbG8="}"#, 0, 0).unwrap_err().contains("does not decode to JSON"));
        assert!(porep(good, 0, 20).unwrap_err().contains("not a porep_seal_commit proof type"));
    }

    #[test]
    fn post_and_snap_checks() {
        let mut i = FilecoinInputs { registered_proof: 3, vanilla_proofs: vec![b"x".to_vec()], randomness: vec![0; 32], ..Default::default() };
        assert_eq!(check(ProofKind::WinningPost, &i), Ok(()));
        i.randomness = vec![0; 31];
        assert!(check(ProofKind::WinningPost, &i).unwrap_err().contains("randomness must be 32 bytes"));
        i.vanilla_proofs = vec![b"x".to_vec(), vec![]];
        assert!(check(ProofKind::WinningPost, &i).unwrap_err().contains("vanilla_proofs[1] is empty"));
        let s = FilecoinInputs { registered_proof: 3, vanilla_proofs: vec![b"x".to_vec()], comm_r_old: vec![1; 32], comm_r_new: vec![1; 32], ..Default::default() };
        assert!(check(ProofKind::SnapDealsUpdate, &s).unwrap_err().contains("comm_d_new must be 32 bytes"));
    }
}
