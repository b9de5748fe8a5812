//! `cuzk-bench gen-vanilla winning-post|window-post|snap-prove`: the
//! vanilla proofs of a sealed (or updated) sector, made by filecoin-proofs
//! on the CPU from the sector's files, written as a JSON array of base64
//! strings (Go's `json.Marshal([][]byte)`, what `--vanilla` reads). The
//! existing bench tool's subcommands, flags and defaults; commitments are
//! given as Filecoin CIDs (`bagboea4b…`), as a `commdr.txt` file
//! (`d:<CID> r:<CID>`), or as 64 hex digits. The proofs are those
//! filecoin-proofs makes for the sector (its PoSt challenges), so they
//! verify for exactly that sector, commitment and randomness.

use super::proof_request::hex32;
use anyhow::{anyhow, bail, ensure, Context, Result};
use base64::Engine as _;
use cuzk_core::filecoin::filecoin_proofs_api::{post, update, PrivateReplicaInfo, SectorId};
use cuzk_core::filecoin::{prover_id_from_miner, ProofKind, ProofType};
use std::path::{Path, PathBuf};

#[derive(clap::Subcommand)]
pub enum GenVanilla {
    /// WinningPoSt: the challenged sector's proof (a proving set of one sector).
    WinningPost(PostArgs),
    /// WindowPoSt: the sector's proof (a partition of one sector).
    WindowPost(PostArgs),
    /// SnapDeals: the update's partition proofs.
    SnapProve(SnapArgs),
}

#[derive(clap::Args)]
pub struct PostArgs {
    /// Go abi.RegisteredPoStProof number (default: winning-post 3, Winning 32G; window-post 13,
    /// Window 32G V1_1).
    #[arg(long)]
    registered_proof: Option<u64>,
    #[arg(long, default_value_t = 1)]
    sector_number: u64,
    #[arg(long, default_value_t = 1000)]
    miner_id: u64,
    /// 32 bytes of hex (default all zeros).
    #[arg(long)]
    randomness: Option<String>,
    /// CommR: a CID, 64 hex digits, or a commdr.txt file (its r:).
    #[arg(long)]
    comm_r: String,
    /// The sealed sector file.
    #[arg(long)]
    sealed: PathBuf,
    /// The sector's cache folder (tree-r-last-*, p_aux, t_aux).
    #[arg(long)]
    cache: PathBuf,
    /// Output file (default winning-vanilla.json / wpost-vanilla.json).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct SnapArgs {
    /// Go abi.RegisteredUpdateProof number (32G = 3).
    #[arg(long, default_value_t = 3)]
    registered_proof: u64,
    /// commdr.txt of the original sector: its r: is comm_r_old.
    #[arg(long)]
    orig_commdr: PathBuf,
    /// commdr.txt of the updated sector: comm_d_new and comm_r_new.
    #[arg(long)]
    update_commdr: PathBuf,
    /// The original sealed sector (the sector key).
    #[arg(long)]
    sector_key: PathBuf,
    #[arg(long)]
    sector_key_cache: PathBuf,
    /// The updated replica.
    #[arg(long)]
    replica: PathBuf,
    #[arg(long)]
    replica_cache: PathBuf,
    #[arg(short, long, default_value = "snap-vanilla.json")]
    output: PathBuf,
}

pub fn run(cmd: GenVanilla) -> Result<()> {
    let (proofs, output) = match cmd {
        GenVanilla::WinningPost(a) => (post_vanilla(ProofKind::WinningPost, 3, &a)?, a.output.unwrap_or("winning-vanilla.json".into())),
        GenVanilla::WindowPost(a) => {
            (post_vanilla(ProofKind::WindowPostPartition, 13, &a)?, a.output.unwrap_or("wpost-vanilla.json".into()))
        }
        GenVanilla::SnapProve(a) => (snap_vanilla(&a)?, a.output.clone()),
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    let json = serde_json::to_string(&proofs.iter().map(|p| b64.encode(p)).collect::<Vec<_>>())?;
    std::fs::write(&output, &json).with_context(|| format!("writing {}", output.display()))?;
    let sizes: Vec<usize> = proofs.iter().map(Vec::len).collect();
    println!("wrote {} vanilla proof(s) of {sizes:?} bytes to {}", proofs.len(), output.display());
    Ok(())
}

fn post_vanilla(kind: ProofKind, default_proof: u64, a: &PostArgs) -> Result<Vec<Vec<u8>>> {
    let ProofType::Post(pt) = ProofType::for_kind(kind, a.registered_proof.unwrap_or(default_proof))? else { unreachable!("a PoSt kind") };
    let randomness: [u8; 32] = match &a.randomness {
        Some(h) => hex32(h).context("--randomness")?,
        None => [0; 32],
    };
    let comm_r = comm_r_arg(&a.comm_r).context("--comm-r")?;
    let prover = prover_id_from_miner(a.miner_id);
    let sector = SectorId::from(a.sector_number);
    let sectors = if kind == ProofKind::WinningPost {
        // The sectors WinningPoSt challenges out of a proving set of one.
        let picked = post::generate_winning_post_sector_challenge(pt, &randomness, 1, prover)?;
        ensure!(picked.iter().all(|&i| i == 0), "sector challenge {picked:?} outside a proving set of one");
        vec![sector; picked.len()]
    } else {
        vec![sector]
    };
    let challenges = post::generate_fallback_sector_challenges(pt, &randomness, &sectors, prover)?;
    let replica = PrivateReplicaInfo::new(pt, comm_r, a.cache.clone(), a.sealed.clone());
    println!("{pt:?}: sector {} of miner {}, randomness {}", a.sector_number, a.miner_id, hex(&randomness));
    challenges
        .iter()
        .map(|(id, c)| {
            post::generate_single_vanilla_proof(pt, *id, &replica, c)
                .with_context(|| format!("vanilla proof of sector {} from {}", u64::from(*id), a.sealed.display()))
        })
        .collect()
}

fn snap_vanilla(a: &SnapArgs) -> Result<Vec<Vec<u8>>> {
    let ProofType::Update(pt) = ProofType::for_kind(ProofKind::SnapDealsUpdate, a.registered_proof)? else { unreachable!("SnapDeals") };
    let comm_r_old = commdr_file(&a.orig_commdr)?.1;
    let (comm_d_new, comm_r_new) = commdr_file(&a.update_commdr)?;
    println!("{pt:?}: comm_r_old {}, comm_r_new {}, comm_d_new {}", hex(&comm_r_old), hex(&comm_r_new), hex(&comm_d_new));
    let proofs = update::generate_partition_proofs(
        pt,
        comm_r_old,
        comm_r_new,
        comm_d_new,
        &a.sector_key,
        &a.sector_key_cache,
        &a.replica,
        &a.replica_cache,
    )
    .context("filecoin-proofs generate_partition_proofs")?;
    Ok(proofs.into_iter().map(|p| p.0).collect())
}

/// `--comm-r`: an existing file is a commdr.txt (its r:), else a CID or hex.
fn comm_r_arg(arg: &str) -> Result<[u8; 32]> {
    if Path::new(arg).is_file() {
        return Ok(commdr_file(Path::new(arg))?.1);
    }
    commitment(arg)
}

/// A `commdr.txt`: `d:<CID> r:<CID>` (whitespace between; hex is taken too).
fn commdr_file(path: &Path) -> Result<([u8; 32], [u8; 32])> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let parts: Vec<&str> = text.split_whitespace().collect();
    let (Some(d), Some(r), 2) =
        (parts.first().and_then(|p| p.strip_prefix("d:")), parts.get(1).and_then(|p| p.strip_prefix("r:")), parts.len())
    else {
        bail!("{}: expected `d:<CID> r:<CID>`", path.display());
    };
    let named = |s, what| commitment(s).with_context(|| format!("{} {what}", path.display()));
    Ok((named(d, "d:")?, named(r, "r:")?))
}

/// A commitment as 64 hex digits or a Filecoin commitment CID.
fn commitment(s: &str) -> Result<[u8; 32]> {
    hex32(s).or_else(|_| cid_commitment(s))
}

/// Multicodecs of Filecoin commitment CIDs (CIDv1): fil-commitment-unsealed
/// with sha2-256-trunc254-padded (CommD), fil-commitment-sealed with
/// poseidon-bls12_381-a2-fc1 (CommR).
const CID_KINDS: [(u64, u64); 2] = [(0xf101, 0x1012), (0xf102, 0xb401)];

/// The 32-byte digest of a base32 (`b…`) CIDv1 of a Filecoin commitment.
fn cid_commitment(s: &str) -> Result<[u8; 32]> {
    let body = s.strip_prefix('b').ok_or_else(|| anyhow!("{s:?} is neither 64 hex digits nor a base32 CID (b…)"))?;
    let bytes = base32_decode(body).ok_or_else(|| anyhow!("{s:?}: not base32"))?;
    let mut rest = bytes.as_slice();
    let mut next = || varint(&mut rest).ok_or_else(|| anyhow!("{s:?}: truncated CID"));
    let (version, codec, hash, len) = (next()?, next()?, next()?, next()?);
    ensure!(version == 1, "{s:?}: CID version {version}, expected 1");
    ensure!(CID_KINDS.contains(&(codec, hash)), "{s:?}: codec {codec:#x} / hash {hash:#x} is not a Filecoin commitment");
    ensure!(len == 32 && rest.len() == 32, "{s:?}: a {}-byte digest, expected 32", rest.len());
    Ok(rest.try_into().expect("32 bytes"))
}

fn varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&x, rest) = b.split_first()?;
        *b = rest;
        v |= u64::from(x & 0x7f) << shift;
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// RFC 4648 base32, lowercase, no padding (multibase `b`).
fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let (mut acc, mut bits, mut out) = (0u32, 0u32, Vec::with_capacity(s.len() * 5 / 8));
    for c in s.bytes() {
        let v = match c {
            b'a'..=b'z' => c - b'a',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The CID of a commitment (tests: CIDs with chosen digests and codecs).
#[cfg(test)]
fn cid_of(codec: u64, hash: u64, digest: &[u8; 32]) -> String {
    let mut bytes = Vec::new();
    for mut v in [1, codec, hash, 32] {
        while v >= 0x80 {
            bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        bytes.push(v as u8);
    }
    bytes.extend_from_slice(digest);
    let (mut acc, mut bits, mut s) = (0u32, 0u32, String::from("b"));
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    for b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            s.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        s.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Filecoin CommR and CommD CID (the existing tool's golden data).
    const COMM_R: &str = "bagboea4b5abcbx3jccdohrttzfneleehcpkmle4oltwuh4q3rcf5tpdodaoj6mtl";
    const COMM_D: &str = "baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq";

    #[test]
    fn commitment_cids_round_trip() {
        let r = cid_commitment(COMM_R).unwrap();
        assert_eq!(cid_of(0xf102, 0xb401, &r), COMM_R);
        let d = cid_commitment(COMM_D).unwrap();
        assert_eq!(cid_of(0xf101, 0x1012, &d), COMM_D);
        assert_ne!(r, d);
        let digest: [u8; 32] = std::array::from_fn(|i| i as u8 * 7);
        assert_eq!(cid_commitment(&cid_of(0xf102, 0xb401, &digest)).unwrap(), digest);
        assert_eq!(commitment(&hex(&digest)).unwrap(), digest);
    }

    #[test]
    fn bad_commitments_are_named() {
        let e = |s: &str| format!("{:#}", commitment(s).unwrap_err());
        assert!(e("zzz").contains("neither 64 hex digits nor"));
        assert!(e("b0").contains("not base32"));
        assert!(e(&COMM_R[..40]).contains("digest"));
        assert!(e(&cid_of(0x55, 0x12, &[1; 32])).contains("not a Filecoin commitment"));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("commdr.txt");
        std::fs::write(&f, format!("d:{COMM_D} r:{COMM_R}\n")).unwrap();
        assert_eq!(commdr_file(&f).unwrap(), (cid_commitment(COMM_D).unwrap(), cid_commitment(COMM_R).unwrap()));
        assert_eq!(comm_r_arg(f.to_str().unwrap()).unwrap(), cid_commitment(COMM_R).unwrap());
        std::fs::write(&f, format!("r:{COMM_R} d:{COMM_D}")).unwrap();
        assert!(format!("{:#}", commdr_file(&f).unwrap_err()).contains("expected `d:<CID> r:<CID>`"));
    }
}
