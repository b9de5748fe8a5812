//! The proof a client subcommand asks the daemon for (`single`, `batch`):
//! flags of the existing bench tool (`-t porep --c1 FILE`, `-t wpost
//! --vanilla FILE --randomness HEX`, ...) with its meaning (PoSt randomness
//! zero when not given, a `--vanilla` file that is not JSON sent as one raw
//! proof), plus `-t builtin --circuit SPEC` for our built-in circuits, and
//! local verification of built-in proofs.

use anyhow::{bail, ensure, Context, Result};
use cuzk_bin::proto as pb;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::engine::BuiltinJob;
use cuzk_core::groth16::{prepare_verifying_key, verify_proof, PreparedVerifyingKey, Proof};
use std::path::PathBuf;

/// The daemon a client subcommand talks to (the global `-a/--addr`):
/// unix:///path, host:port or http://host:port.
#[derive(Clone)]
pub struct Conn {
    pub addr: String,
}

impl Conn {
    pub fn client(&self) -> Result<pb::ProvingEngineClient> {
        cuzk_bin::client::connect(&self.addr).map_err(anyhow::Error::msg)
    }
}

/// A request's vanilla proofs and public values (SnapDeals, WindowPoSt,
/// WinningPoSt), as the existing bench tool's flags name them.
#[derive(clap::Args, Clone, Default)]
pub struct VanillaArgs {
    /// Vanilla proofs (PoSt, SnapDeals): a JSON array of base64 strings, one base64 string, or
    /// (a file that is not JSON) one raw proof.
    #[arg(long)]
    pub vanilla: Option<PathBuf>,
    /// Registered proof number (Go abi enum values; e.g. Winning 32G=3, Window 32G V1.1=13, Update 32G=3).
    #[arg(long, default_value_t = 0)]
    pub registered_proof: u64,
    /// 32 bytes of hex (PoSt; default all zeros, as the existing bench tool sends).
    #[arg(long)]
    pub randomness: Option<String>,
    /// 32 bytes of hex each (SnapDeals).
    #[arg(long)]
    pub comm_r_old: Option<String>,
    #[arg(long)]
    pub comm_r_new: Option<String>,
    #[arg(long)]
    pub comm_d_new: Option<String>,
}

#[derive(clap::Args, Clone)]
pub struct ProofArgs {
    /// Proof type: porep, snap, wpost, winning, or builtin.
    #[arg(short = 't', long = "type")]
    pub proof_type: String,
    /// C1 output JSON (PoRep).
    #[arg(long)]
    pub c1: Option<PathBuf>,
    #[command(flatten)]
    pub vanilla_args: VanillaArgs,
    /// Sector size in bytes (0: PoRep, the C1 output's SectorSize; else implied by the registered
    /// proof). PoRep with registered proof 0 and a sector size other than 2 KiB: the C1 output's
    /// own seal proof, as the existing daemon takes it.
    #[arg(long, default_value_t = 0)]
    pub sector_size: u64,
    #[arg(long, default_value_t = 1)]
    pub sector_num: u64,
    #[arg(long, default_value_t = 1000)]
    pub miner_id: u64,
    /// WindowPoSt partition index.
    #[arg(long, default_value_t = 0)]
    pub partition: u32,
    /// Priority: low, normal, high, critical (default: by proof type).
    #[arg(long)]
    pub priority: Option<String>,
    /// Built-in circuit (-t builtin): sha256:<blocks>, mimc:<hashes>, synthetic:<constraints>[:<inputs>].
    #[arg(long, default_value = "synthetic:4096:8")]
    pub circuit: String,
    /// Partitions per built-in proof.
    #[arg(long, default_value_t = 1)]
    pub partitions: u32,
    /// Witness seed of the first built-in proof (later ones count up).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Verify built-in proofs against this .vk (the daemon's param_cache/builtin-<circuit>.vk).
    #[arg(long)]
    pub vk: Option<PathBuf>,
}

impl ProofArgs {
    /// The request for proof number `i` (built-in proofs get distinct seeds).
    pub fn request(&self, i: u64, request_id: String) -> Result<pb::SubmitProofRequest> {
        let mut r = pb::SubmitProofRequest {
            request_id,
            registered_proof: self.vanilla_args.registered_proof,
            sector_size: self.sector_size,
            sector_number: self.sector_num,
            miner_id: self.miner_id,
            partition_index: self.partition,
            ..Default::default()
        };
        if let Some(p) = &self.priority {
            r.priority = priority(p)? as i32;
        }
        let kind = kind(&self.proof_type)?;
        r.proof_kind = kind as i32;
        match kind {
            pb::ProofKind::Unspecified => {
                r.builtin =
                    Some(pb::BuiltinCircuit { circuit: self.circuit.clone(), partitions: self.partitions, seed: self.builtin_seed(i) });
            }
            _ => {
                fill_filecoin(kind, self.c1.as_ref(), &self.vanilla_args, &mut r)?;
            }
        }
        Ok(r)
    }

    fn builtin_seed(&self, i: u64) -> u64 {
        self.seed.wrapping_add(i * self.partitions.max(1) as u64)
    }

    /// A checker of built-in proof `i`, when `--vk` is given.
    pub fn verifier(&self) -> Result<Option<Verifier>> {
        let Some(vk) = &self.vk else { return Ok(None) };
        ensure!(kind(&self.proof_type)? == pb::ProofKind::Unspecified, "--vk verifies built-in proofs only (-t builtin)");
        let spec: CircuitSpec = self.circuit.parse()?;
        let vk = cuzk_core::srs::VerifyingKey::read_file(vk, cuzk_core::srs::ReadOptions::default())
            .with_context(|| format!("reading vk {}", vk.display()))?;
        Ok(Some(Verifier { pvk: prepare_verifying_key(&vk), spec, args: self.clone() }))
    }
}

pub struct Verifier {
    pvk: PreparedVerifyingKey,
    spec: CircuitSpec,
    args: ProofArgs,
}

impl Verifier {
    /// Checks every partition proof of built-in proof `i`.
    pub fn check(&self, i: u64, proof: &[u8]) -> Result<()> {
        let partitions = self.args.partitions.max(1) as usize;
        let job = BuiltinJob::new(self.spec, partitions, self.args.builtin_seed(i));
        let proofs = Proof::many_from_bytes(proof).context("the daemon's proof bytes do not parse")?;
        ensure!(proofs.len() == partitions, "{} partition proofs, expected {partitions}", proofs.len());
        for (p, proof) in proofs.iter().enumerate() {
            ensure!(verify_proof(&self.pvk, proof, &job.public_inputs(p))?, "partition {p} proof is INVALID");
        }
        Ok(())
    }
}

/// The Filecoin fields of a request of `kind`: the C1 output (PoRep; its
/// SectorSize where `r` gives none), or the vanilla proofs and public
/// values (PoSt randomness all zeros when not given, as the existing bench
/// tool sends; SnapDeals needs its three commitments). Returns a line
/// saying what was read.
pub fn fill_filecoin(kind: pb::ProofKind, c1: Option<&PathBuf>, v: &VanillaArgs, r: &mut pb::SubmitProofRequest) -> Result<String> {
    if kind == pb::ProofKind::PorepSealCommit {
        let path = c1.context("--c1 FILE is required for -t porep")?;
        r.vanilla_proof = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        if r.sector_size == 0 {
            r.sector_size = c1_sector_size(&r.vanilla_proof);
        }
        return Ok(format!("c1:         {} ({} bytes)", path.display(), r.vanilla_proof.len()));
    }
    let path = v.vanilla.as_ref().context("--vanilla FILE is required for -t snap, wpost and winning")?;
    r.vanilla_proofs = read_vanilla(path)?;
    if kind == pb::ProofKind::SnapDealsUpdate {
        let required = |flag: &str, value: &Option<String>| match value {
            Some(h) => Ok(hex32(h).context(flag.to_string())?.to_vec()),
            None => bail!("{flag} HEX is required for -t snap"),
        };
        r.comm_r_old = required("--comm-r-old", &v.comm_r_old)?;
        r.comm_r_new = required("--comm-r-new", &v.comm_r_new)?;
        r.comm_d_new = required("--comm-d-new", &v.comm_d_new)?;
    } else {
        r.randomness = v.randomness.as_deref().map_or(Ok([0; 32]), hex32).context("--randomness")?.to_vec();
    }
    Ok(format!("vanilla:    {} ({} proofs)", path.display(), r.vanilla_proofs.len()))
}

pub fn kind(s: &str) -> Result<pb::ProofKind> {
    Ok(match s.to_lowercase().as_str() {
        "porep" | "porep-c2" | "seal-commit" => pb::ProofKind::PorepSealCommit,
        "snap" | "snap-deals" | "update" => pb::ProofKind::SnapDealsUpdate,
        "wpost" | "window-post" | "windowpost" => pb::ProofKind::WindowPostPartition,
        "winning" | "winning-post" | "winningpost" => pb::ProofKind::WinningPost,
        "builtin" => pb::ProofKind::Unspecified,
        _ => bail!("unknown proof type {s:?}: use porep, snap, wpost, winning or builtin"),
    })
}

fn priority(s: &str) -> Result<pb::Priority> {
    Ok(match s.to_lowercase().as_str() {
        "low" => pb::Priority::Low,
        "normal" => pb::Priority::Normal,
        "high" => pb::Priority::High,
        "critical" => pb::Priority::Critical,
        _ => bail!("unknown priority {s:?}: use low, normal, high or critical"),
    })
}

/// The SectorSize of a C1 output in Curio's envelope; 0 where it has none
/// (the daemon names what is wrong with the file).
fn c1_sector_size(c1: &[u8]) -> u64 {
    serde_json::from_slice::<serde_json::Value>(c1).ok().and_then(|v| v.get("SectorSize")?.as_u64()).unwrap_or(0)
}

/// A `--vanilla` file: JSON (an array of base64 strings or one string), or
/// any other bytes as one raw proof, as the existing bench tool reads it.
fn read_vanilla(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        ensure!(!bytes.is_empty(), "{} is empty", path.display());
        return Ok(vec![bytes]);
    };
    let strings: Vec<&str> = match &v {
        serde_json::Value::String(s) => vec![s],
        serde_json::Value::Array(a) => {
            a.iter().map(|x| x.as_str().context("every array element must be a base64 string")).collect::<Result<_>>()?
        }
        _ => bail!("{}: expected a JSON array of base64 strings or one base64 string", path.display()),
    };
    strings
        .iter()
        .enumerate()
        .map(|(i, s)| base64_decode(s).map_err(|e| anyhow::anyhow!("{} element {i}: not base64: {e}", path.display())))
        .collect()
}

/// Standard base64, padded or not (Go's encoder pads; hand-made files may not).
fn base64_decode(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine;
    let s = s.trim();
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(s.trim_end_matches('=')))
}

/// 32 bytes as 64 hex digits (0x first or not).
pub fn hex32(s: &str) -> Result<[u8; 32]> {
    let h = s.trim().trim_start_matches("0x");
    ensure!(h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()), "{s:?} is not 64 hex digits (32 bytes)");
    Ok(std::array::from_fn(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).expect("hex digits")))
}

/// The status name of an AwaitProofResponse.
pub fn status_name(status: i32) -> &'static str {
    use pb::await_proof_response::Status;
    match Status::from_i32(status) {
        Some(Status::Completed) => "COMPLETED",
        Some(Status::Failed) => "FAILED",
        Some(Status::Cancelled) => "CANCELLED",
        Some(Status::Timeout) => "TIMEOUT",
        _ => "UNKNOWN",
    }
}
