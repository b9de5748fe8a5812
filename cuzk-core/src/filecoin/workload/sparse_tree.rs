//! A Merkle tree of which only the paths of chosen leaves are materialized.
//!
//! A production sector's trees have up to 2^30 leaves; a workload needs
//! only the inclusion proofs of its challenged leaves. Every node off those
//! paths is the digest of an untouched subtree, given by a `filler`: for
//! tree_c and tree_r_last a pseudo-random digest (a subtree nobody will
//! ever open), for tree_d the node of the data tree (see [`RepeatedData`]).
//! The nodes on the paths are hashed from their children with the tree's
//! own hash function, so every proof the tree gives is valid against its
//! one root.

use filecoin_hashers::{Domain, Hasher};
use merkletree::hash::Algorithm;
use std::collections::BTreeMap;
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
        let base = base_path_length::<A, B, C>(nodes);
        let mut arities = vec![A::to_usize(); base];
        // The height within its part (base, sub-tree, top-tree), as
        // filecoin-proofs' paths count it for the hash function.
        let mut heights: Vec<usize> = (0..base).collect();
        for extra in [B::to_usize(), C::to_usize()].into_iter().filter(|&a| a > 0) {
            arities.push(extra);
            heights.push(0);
        }
        debug_assert_eq!(arities.iter().product::<usize>(), nodes, "the arities do not span the leaves");
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

/// Sector data made of one pseudo-random block of leaves repeated to the
/// sector's size, and its binary tree (tree_d). comm_d must exist before
/// the challenges (they derive from the replica id, which hashes comm_d),
/// so every leaf must be openable against it: a repeated block makes the
/// whole tree's root, and any leaf's path, cost one block's hashing.
pub(crate) struct RepeatedData<H: Hasher> {
    /// The block's tree: level 0 its leaves, the last its root.
    block: Vec<Vec<H::Domain>>,
    /// Above the block: the one digest of each level (both children equal).
    above: Vec<H::Domain>,
}

impl<H: Hasher> RepeatedData<H> {
    /// `nodes` leaves (a power of two), repeating a block of `block_nodes`
    /// (a power of two, at most `nodes`) leaves `leaf(i)`.
    pub fn new(nodes: usize, block_nodes: usize, leaf: impl Fn(usize) -> H::Domain) -> Self {
        assert!(nodes.is_power_of_two() && block_nodes.is_power_of_two() && block_nodes <= nodes);
        let mut hasher = H::Function::default();
        let mut hash2 = |l: &H::Domain, r: &H::Domain, height: usize| {
            hasher.reset();
            hasher.multi_node(&[*l, *r], height)
        };
        let mut block = vec![(0..block_nodes).map(leaf).collect::<Vec<_>>()];
        while block.last().is_some_and(|l| l.len() > 1) {
            let height = block.len() - 1;
            let next = block[height].chunks(2).map(|p| hash2(&p[0], &p[1], height)).collect();
            block.push(next);
        }
        let mut above = Vec::new();
        let mut top = block.last().expect("a block has leaves")[0];
        for height in block.len() - 1..nodes.trailing_zeros() as usize {
            top = hash2(&top, &top, height);
            above.push(top);
        }
        RepeatedData { block, above }
    }

    /// The node `index` at `level` (leaves: level 0).
    pub fn node(&self, level: usize, index: usize) -> H::Domain {
        match self.block.get(level) {
            Some(nodes) => nodes[index % nodes.len()],
            None => self.above[level - self.block.len()],
        }
    }

    pub fn root(&self) -> H::Domain {
        self.above.last().copied().unwrap_or_else(|| self.block.last().expect("a block has leaves")[0])
    }
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

    #[test]
    fn repeated_data_matches_its_sparse_tree() {
        let nodes = 1 << 10;
        let data = RepeatedData::<Sha256Hasher>::new(nodes, 1 << 4, |i| prf(2, "data", i as u64, 0));
        let leaves = [3usize, 17, 1000];
        let tree = SparseTree::<Sha256Hasher>::new::<U2, U0, U0>(nodes, leaves.iter().map(|&i| (i, data.node(0, i))), |l, i| {
            data.node(l, i)
        });
        assert_eq!(tree.root(), data.root());
        for i in leaves {
            let proof: MerkleProof<Sha256Hasher, U2> = tree.proof(i);
            assert!(proof.verify() && proof.proves_challenge(i));
        }
        // Blocks repeat: leaf 3 and leaf 19 hold the same data.
        assert_eq!(data.node(0, 3), data.node(0, 19));
        assert_ne!(data.node(0, 3), data.node(0, 4));
    }
}
