//! Production-shape Filecoin inputs without sealed sectors: what Curio
//! sends for each proof kind, at every sector size, valid against
//! filecoin-proofs' own verifiers and deterministic in a seed. A real
//! input needs a sealed sector (hours of work, hundreds of GiB of disk);
//! these need only the parts a proof opens.
//!
//! `sparse_tree`: Merkle trees materialized along the opened paths, and
//! trees every leaf of which opens (periodic leaves);
//! `porep`: the PoRep C1 output; `post`: WindowPoSt and WinningPoSt
//! sector proofs; `snap`: SnapDeals partition proofs.

mod porep;
mod post;
mod snap;
mod sparse_tree;

pub use porep::{porep, PorepSpec, PorepWorkload};
pub use post::{post, PostSpec, PostWorkload};
pub use snap::{snap, SnapSpec, SnapWorkload};
