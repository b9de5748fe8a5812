//! A Merkle tree of which only the paths of chosen leaves are materialized.
//!
//! A production sector's trees have up to 2^30 leaves; a workload needs
//! only the inclusion proofs of its challenged leaves. Every node off those
//! paths is the digest of an untouched subtree, given by a `filler`: for
//! tree_c and tree_r_last a pseudo-random digest (a subtree nobody will
//! ever open), for trees whose root must exist before the challenges the
//! node of a [`PeriodicTree`].
//! The nodes on the paths are hashed from their children with the tree's
//! own hash function, so every proof the tree gives is valid against its
//! one root.

use filecoin_hashers::{Domain, Hasher};
use merkletree::hash::Algorithm;
use std::collections::{BTreeMap, HashMap};
use storage_proofs_core::merkle::{base_path_length, MerkleProof};
use typenum::Unsigned;

pub(crate) struct SparseTree<H: Hasher> {
    /// Arity per level, leaves first.
    arities: Vec<usize>,
    /// Known nodes per level (level 0: leaves; the last: the root alone).
    levels: Vec<BTreeMap<usize, H::Domain>>,
}

impl<H: Hasher> SparseTree<H> {
    /// The tree over `nodes` leaves with the shape of a filecoin-proofs tree
    /// of arities (A, B, C) (base arity, sub-tree arity, top-tree arity;
    /// 0 = none), holding `leaves` (index, value); `filler(level, index)` is
    /// the digest of the untouched node `index` at `level`.
    pub fn new<A: Unsigned, B: Unsigned, C: Unsigned>(
        nodes: usize,
        leaves: impl IntoIterator<Item = (usize, H::Domain)>,
        filler: impl Fn(usize, usize) -> H::Domain,
    ) -> Self {
        let (arities, heights) = shape::<A, B, C>(nodes);
        let mut levels = vec![leaves.into_iter().collect::<BTreeMap<_, _>>()];
        let mut hasher = H::Function::default();
        for (level, (&arity, &height)) in arities.iter().zip(&heights).enumerate() {
            let parents: Vec<usize> = {
                let mut p: Vec<usize> = levels[level].keys().map(|i| i / arity).collect();
                p.dedup();
                p
            };
            let mut next = BTreeMap::new();
            for parent in parents {
                let children: Vec<H::Domain> = (parent * arity..(parent + 1) * arity)
                    .map(|i| match levels[level].get(&i) {
                        Some(d) => *d,
                        None => filler(level, i),
                    })
                    .collect();
                for (i, d) in (parent * arity..).zip(&children) {
                    levels[level].insert(i, *d);
                }
                hasher.reset();
                next.insert(parent, hasher.multi_node(&children, height));
            }
            levels.push(next);
        }
        SparseTree { arities, levels }
    }

    pub fn root(&self) -> H::Domain {
        *self.levels.last().and_then(|l| l.get(&0)).expect("a tree with leaves has a root")
    }

    pub fn leaf(&self, index: usize) -> H::Domain {
        self.levels[0][&index]
    }

    /// The siblings and position at each level of leaf `index`'s path.
    pub fn path(&self, index: usize) -> Vec<(Vec<H::Domain>, usize)> {
        let mut at = index;
        self.arities
            .iter()
            .enumerate()
            .map(|(level, &arity)| {
                let (parent, pos) = (at / arity, at % arity);
                let siblings =
                    (parent * arity..(parent + 1) * arity).filter(|&i| i != at).map(|i| self.levels[level][&i]).collect();
                at = parent;
                (siblings, pos)
            })
            .collect()
    }

    /// filecoin-proofs' inclusion proof of leaf `index` (materialized when
    /// the tree was built).
    pub fn proof<A, B, C>(&self, index: usize) -> MerkleProof<H, A, B, C>
    where
        A: filecoin_hashers::PoseidonArity,
        B: filecoin_hashers::PoseidonArity,
        C: filecoin_hashers::PoseidonArity,
    {
        MerkleProof::from_parts(self.leaf(index), self.root(), self.path(index))
    }
}

/// A tree every leaf of which can be opened, at the cost of one block's
/// hashing: its leaves repeat with a period (a power of two) within each
/// region (a power of two, a multiple of the period); every node below a
/// region's size is one of a region's period's worth of distinct digests,
/// every node above is hashed from its children. Used as the untouched
/// nodes of a [`SparseTree`] where the root must exist before the
/// challenges: tree_d (they derive from the replica id, which hashes
/// comm_d), and SnapDeals' trees (they derive from comm_r_new), whose new
/// replica differs per region (the encoding's rho depends on a leaf's high
/// bits).
pub(crate) struct PeriodicTree<H: Hasher> {
    /// Leaves under one node of each level (level 0: 1).
    spans: Vec<usize>,
    period: usize,
    region: usize,
    /// The distinct nodes of each level, by [`Self::key`].
    levels: Vec<HashMap<(usize, usize), H::Domain>>,
}

impl<H: Hasher> PeriodicTree<H> {
    /// The tree over `nodes` leaves with the shape of a filecoin-proofs tree
    /// of arities (A, B, C), whose leaf `i` is `leaf(i)`: a function of
    /// `i % period` and `i / region` only.
    pub fn new<A: Unsigned, B: Unsigned, C: Unsigned>(
        nodes: usize,
        period: usize,
        region: usize,
        leaf: impl Fn(usize) -> H::Domain,
    ) -> Self {
        assert!(period.is_power_of_two() && region.is_power_of_two() && period <= region && region <= nodes);
        let (arities, heights) = shape::<A, B, C>(nodes);
        let mut spans = vec![1];
        for a in &arities {
            spans.push(spans.last().expect("level 0") * a);
        }
        let mut tree = PeriodicTree { spans, period, region, levels: Vec::new() };
        let mut hasher = H::Function::default();
        for level in 0..=arities.len() {
            let span = tree.spans[level];
            // One node of each distinct digest.
            let nodes_of_level: Vec<usize> = if span > region {
                (0..nodes / span).collect()
            } else {
                let classes = (period / span).max(1);
                (0..nodes / region).flat_map(|r| (0..classes).map(move |c| r * (region / span) + c)).collect()
            };
            let mut digests = HashMap::with_capacity(nodes_of_level.len());
            for i in nodes_of_level {
                let digest = if level == 0 {
                    leaf(i)
                } else {
                    let a = arities[level - 1];
                    let children: Vec<H::Domain> = (i * a..(i + 1) * a).map(|c| tree.node(level - 1, c)).collect();
                    hasher.reset();
                    hasher.multi_node(&children, heights[level - 1])
                };
                digests.insert(tree.key(level, i), digest);
            }
            tree.levels.push(digests);
        }
        tree
    }

    /// Nodes of equal keys have equal digests: below a region's size, a
    /// node is its region and its place within the period.
    fn key(&self, level: usize, index: usize) -> (usize, usize) {
        let span = self.spans[level];
        if span > self.region {
            (index, 0)
        } else {
            let class = if span >= self.period { 0 } else { index % (self.period / span) };
            (index * span / self.region, class)
        }
    }

    /// The node `index` at `level` (leaves: level 0).
    pub fn node(&self, level: usize, index: usize) -> H::Domain {
        self.levels[level][&self.key(level, index)]
    }

    pub fn root(&self) -> H::Domain {
        self.node(self.levels.len() - 1, 0)
    }
}

/// The arity of each level of a filecoin-proofs tree of `nodes` leaves
/// with arities (A, B, C) (base, sub-tree, top-tree; 0 = none), leaves
/// first, and each level's height within its part, as filecoin-proofs'
/// paths count it for the hash function.
fn shape<A: Unsigned, B: Unsigned, C: Unsigned>(nodes: usize) -> (Vec<usize>, Vec<usize>) {
    let base = base_path_length::<A, B, C>(nodes);
    let mut arities = vec![A::to_usize(); base];
    let mut heights: Vec<usize> = (0..base).collect();
    for extra in [B::to_usize(), C::to_usize()].into_iter().filter(|&a| a > 0) {
        arities.push(extra);
        heights.push(0);
    }
    debug_assert_eq!(arities.iter().product::<usize>(), nodes, "the arities do not span the leaves");
    (arities, heights)
}

/// A pseudo-random field element (as a tree domain): 32 bytes of BLAKE2b
/// of the workload seed and what the element is for, top two bits clear so
/// it is below the field's modulus, as filecoin-proofs makes its nodes.
pub(crate) fn prf<D: Domain>(seed: u64, what: &str, a: u64, b: u64) -> D {
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(prf_bytes(seed, what, a, b).as_slice());
    bytes[31] &= 0b0011_1111;
    D::try_from_bytes(&bytes).expect("32 bytes below 2^254 are a field element")
}

/// 32 pseudo-random bytes for (seed, what, a, b).
pub(crate) fn prf_bytes(seed: u64, what: &str, a: u64, b: u64) -> [u8; 32] {
    let hash = blake2b_simd::Params::new()
        .hash_length(32)
        .personal(b"cuzk-workload")
        .to_state()
        .update(&seed.to_le_bytes())
        .update(&(what.len() as u64).to_le_bytes())
        .update(what.as_bytes())
        .update(&a.to_le_bytes())
        .update(&b.to_le_bytes())
        .finalize();
    hash.as_bytes().try_into().expect("32-byte hash")
}

#[cfg(test)]
mod tests {
    use super::*;
    use filecoin_hashers::poseidon::PoseidonHasher;
    use filecoin_hashers::sha256::Sha256Hasher;
    use storage_proofs_core::merkle::MerkleProofTrait;
    use typenum::{U0, U2, U8};

    type P = PoseidonHasher;

    #[test]
    fn every_path_opens_its_leaf_against_one_root() {
        // 8 * 8 * 8 base leaves, 8 sub-trees, 2 top trees: the 64 GiB shape.
        let nodes = 8 * 8 * 8 * 8 * 2;
        let leaves: Vec<usize> = vec![0, 1, 7, 8, 511, 512, 4095, 4096, nodes - 1];
        let tree = SparseTree::<P>::new::<U8, U8, U2>(nodes, leaves.iter().map(|&i| (i, prf(1, "leaf", i as u64, 0))), |l, i| {
            prf(1, "filler", l as u64, i as u64)
        });
        for &i in &leaves {
            let proof: MerkleProof<P, U8, U8, U2> = tree.proof(i);
            assert!(proof.verify(), "leaf {i}");
            assert!(proof.proves_challenge(i), "leaf {i}");
            assert_eq!(proof.root(), tree.root());
        }
    }

    /// The root of the tree of all `nodes` leaves, hashed in full.
    fn full_root<H: Hasher, A: Unsigned, B: Unsigned, C: Unsigned>(nodes: usize, leaf: impl Fn(usize) -> H::Domain) -> H::Domain {
        SparseTree::<H>::new::<A, B, C>(nodes, (0..nodes).map(|i| (i, leaf(i))), |_, _| unreachable!("every leaf is given")).root()
    }

    #[test]
    fn periodic_trees_equal_the_trees_hashed_in_full() {
        // Binary (tree_d), one region.
        let nodes = 1 << 10;
        let leaf = |i: usize| prf(2, "data", (i % 16) as u64, 0);
        let data = PeriodicTree::<Sha256Hasher>::new::<U2, U0, U0>(nodes, 16, nodes, leaf);
        assert_eq!(data.root(), full_root::<Sha256Hasher, U2, U0, U0>(nodes, leaf));
        let leaves = [3usize, 17, 1000];
        let tree = SparseTree::<Sha256Hasher>::new::<U2, U0, U0>(nodes, leaves.iter().map(|&i| (i, data.node(0, i))), |l, i| {
            data.node(l, i)
        });
        assert_eq!(tree.root(), data.root());
        for i in leaves {
            let proof: MerkleProof<Sha256Hasher, U2> = tree.proof(i);
            assert!(proof.verify() && proof.proves_challenge(i));
        }
        // The 32 GiB shape (8 sub-trees) in 4 regions of 128 leaves.
        let nodes = 8 * 8 * 8;
        let leaf = |i: usize| prf(3, "leaf", (i % 16) as u64, (i / 128) as u64);
        let periodic = PeriodicTree::<P>::new::<U8, U8, U0>(nodes, 16, 128, leaf);
        assert_eq!(periodic.root(), full_root::<P, U8, U8, U0>(nodes, leaf));
        assert_ne!(periodic.node(0, 3), periodic.node(0, 131), "regions differ");
    }
}
