//! Registered proof types: which circuit a request needs,
//! its sector size and how many partition circuits it has.
//!
//! Numbers on the wire are Go's `abi.Registered*Proof` values, as Curio
//! sends them (WindowPoSt 10..14, `V1_1` in Go, are filecoin-proofs-api's
//! `V1_2`, the grindability fix).

use super::error::{FilecoinError, Result};
use crate::proof_kind::ProofKind;
use filecoin_proofs::types::SectorUpdateConfig;
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

/// A registered proof: what fixes the circuit (and so the parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProofType {
    Seal(RegisteredSealProof),
    Post(RegisteredPoStProof),
    Update(RegisteredUpdateProof),
}

/// The existing cuzk daemon's short circuit ids (PreloadSRS, EvictSRS,
/// status) and the registered proofs whose circuits they name.
pub const SHORT_IDS: [(&str, ProofType); 6] = [
    ("porep-32g", ProofType::Seal(RegisteredSealProof::StackedDrg32GiBV1_1)),
    ("porep-64g", ProofType::Seal(RegisteredSealProof::StackedDrg64GiBV1_1)),
    ("wpost-32g", ProofType::Post(RegisteredPoStProof::StackedDrgWindow32GiBV1_2)),
    ("winning-32g", ProofType::Post(RegisteredPoStProof::StackedDrgWinning32GiBV1)),
    ("snap-32g", ProofType::Update(RegisteredUpdateProof::StackedDrg32GiBV1)),
    ("snap-64g", ProofType::Update(RegisteredUpdateProof::StackedDrg64GiBV1)),
];

/// Go's `abi.RegisteredSealProof` numbering.
pub fn seal_proof_from_u64(v: u64) -> Result<RegisteredSealProof> {
    use RegisteredSealProof::*;
    const ALL: [RegisteredSealProof; 20] = [
        StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1,
        StackedDrg2KiBV1_1, StackedDrg8MiBV1_1, StackedDrg512MiBV1_1, StackedDrg32GiBV1_1, StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep, StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep, StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep, StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep, StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ];
    ALL.get(v as usize).copied().ok_or(FilecoinError::UnknownRegisteredProof { kind: "PoRep", value: v })
}

/// Go's `abi.RegisteredPoStProof` numbering.
pub fn post_proof_from_u64(v: u64) -> Result<RegisteredPoStProof> {
    use RegisteredPoStProof::*;
    const ALL: [RegisteredPoStProof; 15] = [
        StackedDrgWinning2KiBV1, StackedDrgWinning8MiBV1, StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1, StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1, StackedDrgWindow8MiBV1, StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1, StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2, StackedDrgWindow8MiBV1_2, StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2, StackedDrgWindow64GiBV1_2,
    ];
    ALL.get(v as usize).copied().ok_or(FilecoinError::UnknownRegisteredProof { kind: "PoSt", value: v })
}

/// Go's `abi.RegisteredUpdateProof` numbering.
pub fn update_proof_from_u64(v: u64) -> Result<RegisteredUpdateProof> {
    use RegisteredUpdateProof::*;
    const ALL: [RegisteredUpdateProof; 5] =
        [StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1];
    ALL.get(v as usize).copied().ok_or(FilecoinError::UnknownRegisteredProof { kind: "SnapDeals", value: v })
}

impl ProofType {
    /// The registered proof of a non-PoRep request (a PoRep's comes from
    /// its C1 output), checked against the kind.
    pub fn for_kind(kind: ProofKind, registered_proof: u64) -> Result<Self> {
        use filecoin_proofs::types::PoStType;
        let t = match kind {
            ProofKind::PorepSealCommit => Self::Seal(seal_proof_from_u64(registered_proof)?),
            ProofKind::SnapDealsUpdate => Self::Update(update_proof_from_u64(registered_proof)?),
            ProofKind::WindowPostPartition | ProofKind::WinningPost => {
                let p = post_proof_from_u64(registered_proof)?;
                let want = if kind == ProofKind::WinningPost { PoStType::Winning } else { PoStType::Window };
                if p.typ() != want {
                    return Err(FilecoinError::Inconsistent(format!(
                        "registered proof {registered_proof} ({p:?}) is not a {} proof",
                        kind.title()
                    )));
                }
                Self::Post(p)
            }
            ProofKind::Builtin | ProofKind::Custom => return Err(not_filecoin(kind)),
        };
        Ok(t)
    }

    /// Sector size in bytes.
    pub fn sector_size(self) -> u64 {
        match self {
            Self::Seal(p) => u64::from(p.sector_size()),
            Self::Post(p) => u64::from(p.sector_size()),
            Self::Update(p) => u64::from(p.sector_size()),
        }
    }

    /// Partition circuits in one complete proof of this type. A WindowPoSt
    /// request is one partition (Curio splits by partition itself).
    pub fn partitions(self) -> usize {
        match self {
            Self::Seal(p) => p.partitions() as usize,
            Self::Post(_) => 1,
            Self::Update(p) => usize::from(SectorUpdateConfig::from_porep_config(&p.as_v1_config()).update_partitions),
        }
    }

    /// Sectors one PoSt partition circuit proves (padded by repetition).
    pub fn post_sectors_per_partition(self) -> Option<usize> {
        match self {
            Self::Post(p) => Some(p.sector_count()),
            _ => None,
        }
    }

    /// Checks a request's sector size (0 = not given).
    pub fn check_sector_size(self, request: u64) -> Result<()> {
        if request != 0 && request != self.sector_size() {
            return Err(FilecoinError::SectorSizeMismatch {
                request,
                registered: format!("{self:?}"),
                expected: self.sector_size(),
            });
        }
        Ok(())
    }
}

/// The sector sizes Filecoin supports, in bytes.
pub const SECTOR_SIZES: [u64; 5] = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30];

/// Parses `2KiB`, `8MiB`, `512MiB`, `32GiB`, `64GiB` or a byte count.
pub fn parse_sector_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let (num, mul) = match t.len().checked_sub(3).map(|i| t.split_at(i)) {
        Some((n, u)) if u.eq_ignore_ascii_case("kib") => (n, 1u64 << 10),
        Some((n, u)) if u.eq_ignore_ascii_case("mib") => (n, 1 << 20),
        Some((n, u)) if u.eq_ignore_ascii_case("gib") => (n, 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mul).filter(|v| SECTOR_SIZES.contains(v))
}

impl ProofType {
    /// The current registered proof of a kind and sector size (PoRep
    /// V1_1, WindowPoSt V1_2, WinningPoSt and SnapDeals V1): what the
    /// network uses today; the circuit, and so the parameters, are shared
    /// with the older and synthetic variants.
    pub fn current(kind: ProofKind, sector_size: u64) -> Result<Self> {
        let v = Self::current_number(kind, sector_size)?;
        Ok(match kind {
            ProofKind::PorepSealCommit => Self::Seal(seal_proof_from_u64(v)?),
            ProofKind::SnapDealsUpdate => Self::Update(update_proof_from_u64(v)?),
            ProofKind::WindowPostPartition => Self::Post(post_proof_from_u64(v)?),
            ProofKind::WinningPost => Self::Post(post_proof_from_u64(v)?),
            ProofKind::Builtin | ProofKind::Custom => return Err(not_filecoin(kind)),
        })
    }

    /// The Go abi number of [`Self::current`] (a request's `registered_proof`).
    pub fn current_number(kind: ProofKind, sector_size: u64) -> Result<u64> {
        let i = SECTOR_SIZES.iter().position(|&s| s == sector_size).ok_or_else(|| FilecoinError::Unsupported {
            what: format!("sector size {sector_size}"),
            why: "Filecoin supports 2 KiB, 8 MiB, 512 MiB, 32 GiB and 64 GiB",
        })? as u64;
        Ok(match kind {
            ProofKind::PorepSealCommit => 5 + i,
            ProofKind::SnapDealsUpdate | ProofKind::WinningPost => i,
            ProofKind::WindowPostPartition => 10 + i,
            ProofKind::Builtin | ProofKind::Custom => return Err(not_filecoin(kind)),
        })
    }
}

pub(crate) fn not_filecoin(kind: ProofKind) -> FilecoinError {
    FilecoinError::Unsupported { what: format!("proof kind {kind}"), why: "it is not a Filecoin proof kind" }
}
