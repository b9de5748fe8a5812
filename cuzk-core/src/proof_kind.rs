//! What a job proves, as one enum for the whole crate: the four Filecoin
//! kinds, numbered as in the gRPC `cuzk.v1.ProofKind` enum, and two engine
//! extensions outside the wire enum (`Builtin`, our test and demo circuits;
//! `Custom`, a caller's circuit). Names for logs, metrics, tools and the
//! existing daemon's dashboards all live here.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ProofKind {
    PorepSealCommit = 1,
    SnapDealsUpdate = 2,
    WindowPostPartition = 3,
    WinningPost = 4,
    Builtin = 100,
    Custom = 101,
}

impl ProofKind {
    pub const ALL: [ProofKind; 6] = [
        ProofKind::PorepSealCommit,
        ProofKind::SnapDealsUpdate,
        ProofKind::WindowPostPartition,
        ProofKind::WinningPost,
        ProofKind::Builtin,
        ProofKind::Custom,
    ];

    /// The Filecoin kind of a `cuzk.v1.ProofKind` number.
    pub fn from_proto(v: i32) -> Option<Self> {
        Some(match v {
            1 => Self::PorepSealCommit,
            2 => Self::SnapDealsUpdate,
            3 => Self::WindowPostPartition,
            4 => Self::WinningPost,
            _ => return None,
        })
    }

    /// A Filecoin kind as tools name it: `porep`, `snap`, `window` or
    /// `winning` (and a few spellings of each).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "porep" | "porep-c2" | "seal" => Self::PorepSealCommit,
            "snap" | "snapdeals" | "update" => Self::SnapDealsUpdate,
            "window" | "windowpost" | "window-post" => Self::WindowPostPartition,
            "winning" | "winningpost" | "winning-post" => Self::WinningPost,
            _ => return None,
        })
    }

    /// One of the four Filecoin kinds.
    pub fn is_filecoin(self) -> bool {
        !matches!(self, Self::Builtin | Self::Custom)
    }

    /// The label used in logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::PorepSealCommit => "porep_seal_commit",
            Self::SnapDealsUpdate => "snap_deals_update",
            Self::WindowPostPartition => "window_post_partition",
            Self::WinningPost => "winning_post",
            Self::Builtin => "builtin",
            Self::Custom => "custom",
        }
    }

    /// The name people use, in error messages.
    pub fn title(self) -> &'static str {
        match self {
            Self::PorepSealCommit => "PoRep C2",
            Self::SnapDealsUpdate => "SnapDeals update",
            Self::WindowPostPartition => "WindowPoSt",
            Self::WinningPost => "WinningPoSt",
            Self::Builtin => "built-in circuit",
            Self::Custom => "custom circuit",
        }
    }

    /// The name the existing cuzk daemon gives the kind in GetStatus and
    /// `GET /status` (its dashboards and scripts match on these).
    pub fn compat_name(self) -> &'static str {
        match self {
            Self::PorepSealCommit => "porep-c2",
            Self::SnapDealsUpdate => "snap-update",
            Self::WindowPostPartition => "window-post",
            Self::WinningPost => "winning-post",
            Self::Builtin => "builtin",
            Self::Custom => "custom",
        }
    }

    /// The existing daemon's `proof_kind` label value in its metrics.
    pub fn compat_label(self) -> &'static str {
        match self {
            Self::PorepSealCommit => "porep_c2",
            Self::SnapDealsUpdate => "snap_update",
            Self::WindowPostPartition => "window_post",
            Self::WinningPost => "winning_post",
            Self::Builtin => "builtin",
            Self::Custom => "custom",
        }
    }

    /// Position in [`Self::ALL`].
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|&k| k == self).expect("ALL lists every kind")
    }
}

impl fmt::Display for ProofKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        for k in ProofKind::ALL {
            assert_eq!(ProofKind::ALL[k.index()], k);
            assert_eq!(ProofKind::from_proto(k as i32), k.is_filecoin().then_some(k));
        }
        assert_eq!(ProofKind::from_proto(0), None);
        assert_eq!(ProofKind::from_name("Window-PoSt"), Some(ProofKind::WindowPostPartition));
        assert_eq!(ProofKind::from_name("builtin"), None);
        assert_eq!(ProofKind::from_name("WINNING"), Some(ProofKind::WinningPost));
    }
}
