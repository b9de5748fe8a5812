//! One challenged node of a PoRep partition: its data leaf opens in tree D
//! (comm_d), its 14 parents' columns open in tree C (comm_c), its label is
//! recomputed in every layer from its parents' labels, the last label
//! encodes the data leaf into the replica node that opens in tree R
//! (comm_r_last), and its own column opens in tree C. Constraint for
//! constraint storage-proofs' `stacked::circuit::params::Proof::synthesize`.

use super::column::{column_hash, Column};
use super::DataPath;
use crate::filecoin::merkle_path::TreePath;
use crate::witness_gadgets::to_bits_le;
use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, Index, SynthesisError, Variable};
use bellperson::gadgets::uint32::UInt32;
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::DefaultPieceHasher;
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::gadgets::encode::encode;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{Proof, PublicParams};

pub(super) struct Challenge<Tree: MerkleTreeTrait> {
    data_leaf: Option<Fr>,
    data_path: DataPath,
    /// The challenged node's index.
    node: Option<u64>,
    replica_path: TreePath<Tree>,
    column_path: TreePath<Tree>,
    drg_parents: Vec<Column<Tree>>,
    exp_parents: Vec<Column<Tree>>,
}

/// The part of a labeling proof storage-proofs keeps crate-private.
#[derive(serde::Deserialize)]
struct LabelingNode {
    node: u64,
}

/// The values the partition allocates once and every challenge uses.
pub(super) struct Shared {
    pub comm_d: AllocatedNum<Fr>,
    pub comm_c: AllocatedNum<Fr>,
    pub comm_r_last: AllocatedNum<Fr>,
    /// The replica id's bits, most significant first.
    pub replica_id: Vec<Boolean>,
}

impl Shared {
    /// The variables the shared values are allocated as, in the order they
    /// were allocated, which [`Shared::stand_ins`] keeps: bellpepper sorts
    /// a linear combination's terms by variable, so a row of a challenge
    /// recorded apart lists them as the sequential recording does.
    pub fn variables(&self) -> Vec<Variable> {
        self.slots().into_iter().map(|(v, _)| v).collect()
    }

    /// The shared values allocated again in `cs`, one variable per
    /// [`Shared::variables`] entry in its order: what a challenge recorded
    /// apart reads.
    pub fn stand_ins<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<Shared, SynthesisError> {
        let nums = [&self.comm_d, &self.comm_c, &self.comm_r_last];
        let mut stand_in_nums: [Option<AllocatedNum<Fr>>; 3] = Default::default();
        let mut replica_id = self.replica_id.clone();
        for (_, slot) in self.slots() {
            match slot {
                Slot::Num(i) => {
                    let value = nums[i].get_value();
                    stand_in_nums[i] = Some(AllocatedNum::alloc(&mut *cs, || value.ok_or(SynthesisError::AssignmentMissing))?);
                }
                Slot::Bit(i) => {
                    replica_id[i] = match &self.replica_id[i] {
                        Boolean::Is(bit) => Boolean::Is(AllocatedBit::alloc(&mut *cs, bit.get_value())?),
                        Boolean::Not(bit) => Boolean::Not(AllocatedBit::alloc(&mut *cs, bit.get_value())?),
                        constant => constant.clone(),
                    }
                }
            }
        }
        let [comm_d, comm_c, comm_r_last] = stand_in_nums.map(|n| n.expect("every number has a slot"));
        Ok(Shared { comm_d, comm_c, comm_r_last, replica_id })
    }

    /// Each shared variable with where it is in `self`, in allocation order.
    fn slots(&self) -> Vec<(Variable, Slot)> {
        let nums = [&self.comm_d, &self.comm_c, &self.comm_r_last].into_iter().enumerate().map(|(i, n)| (n.get_variable(), Slot::Num(i)));
        let bits = self.replica_id.iter().enumerate().filter_map(|(i, b)| match b {
            Boolean::Is(bit) | Boolean::Not(bit) => Some((bit.get_variable(), Slot::Bit(i))),
            Boolean::Constant(_) => None,
        });
        let mut slots: Vec<_> = nums.chain(bits).collect();
        slots.sort_by_key(|(v, _)| match v.get_unchecked() {
            Index::Input(i) => (0, i),
            Index::Aux(i) => (1, i),
        });
        slots
    }
}

/// Where a shared variable is: one of the three numbers, or a replica id bit.
#[derive(Clone, Copy)]
enum Slot {
    Num(usize),
    Bit(usize),
}

impl<Tree: 'static + MerkleTreeTrait> Challenge<Tree> {
    pub(super) fn blank(pp: &PublicParams<Tree>) -> Self {
        let leaves = pp.graph.size();
        let columns = |n| (0..n).map(|_| Column::blank(pp.num_layers, leaves)).collect();
        Challenge {
            data_leaf: None,
            data_path: DataPath::blank(leaves),
            node: None,
            replica_path: TreePath::<Tree>::blank(leaves),
            column_path: TreePath::<Tree>::blank(leaves),
            drg_parents: columns(pp.graph.base_graph().degree()),
            exp_parents: columns(pp.graph.expansion_degree()),
        }
    }

    pub(super) fn from_vanilla(p: &Proof<Tree, DefaultPieceHasher>) -> anyhow::Result<Self> {
        let first = p.labeling_proofs.first().ok_or_else(|| anyhow::anyhow!("a challenge without labeling proofs"))?;
        let LabelingNode { node } = serde_json::from_value(serde_json::to_value(first)?)?;
        let columns = |v: &[_]| v.iter().map(Column::from_vanilla).collect::<anyhow::Result<Vec<_>>>();
        let cols = &p.replica_column_proofs;
        let own = Column::<Tree>::from_vanilla(&cols.c_x)?;
        Ok(Challenge {
            data_leaf: Some(p.comm_d_proofs.leaf().into()),
            data_path: DataPath::from_options(p.comm_d_proofs.as_options()),
            node: Some(node),
            replica_path: TreePath::<Tree>::from_options(p.comm_r_last_proof.as_options()),
            column_path: own.into_path(),
            drg_parents: columns(&cols.drg_parents)?,
            exp_parents: columns(&cols.exp_parents)?,
        })
    }


    pub(super) fn synthesize<CS: ConstraintSystem<Fr>>(self, mut cs: CS, shared: &Shared) -> Result<(), SynthesisError> {
        let Challenge { data_leaf, data_path, node, replica_path, column_path, drg_parents, exp_parents } = self;
        if drg_parents.is_empty() || exp_parents.is_empty() {
            return Err(SynthesisError::Unsatisfiable);
        }
        let data_leaf =
            AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || data_leaf.ok_or(SynthesisError::AssignmentMissing))?;
        data_path.synthesize(cs.namespace(|| "comm_d_inclusion"), &data_leaf, &shared.comm_d)?;

        let layers = drg_parents[0].layers();
        let open = |cs: &mut CS, kind: &str, parents: Vec<Column<Tree>>| {
            let mut rows = Vec::with_capacity(parents.len());
            for (i, parent) in parents.into_iter().enumerate() {
                if parent.layers() != layers {
                    return Err(SynthesisError::Unsatisfiable);
                }
                let (column, path) = parent.alloc(cs.namespace(|| format!("{kind}_parent_{i}_num")))?;
                let hash = column_hash(cs.namespace(|| format!("{kind}_parent_{i}_constraint")), &column)?;
                path.synthesize(cs.namespace(|| format!("{kind}_parent_{i}_inclusion")), &hash, &shared.comm_c)?;
                rows.push(column);
            }
            Ok(rows)
        };
        let drg = open(&mut cs, "drg", drg_parents)?;
        let exp = open(&mut cs, "exp", exp_parents)?;

        let node = UInt64::alloc(cs.namespace(|| "challenge"), node)?;
        node.pack_into_input(cs.namespace(|| "challenge input"))?;

        let mut labels = Vec::with_capacity(layers);
        for layer in 1..=layers {
            let mut cs = cs.namespace(|| format!("labeling_{layer}"));
            let mut parents = Vec::new();
            for column in &drg {
                let bits = to_bits_le(cs.namespace(|| format!("drg_parent_{}_bits", parents.len())), &column[layer - 1])?;
                parents.push(reverse_bit_numbering(bits));
            }
            // Expander parents have no label in layer 1; their column's
            // row i is layer i + 1's parent.
            if layer > 1 {
                for column in &exp {
                    let bits = to_bits_le(cs.namespace(|| format!("exp_parent_{}_bits", parents.len())), &column[layer - 2])?;
                    parents.push(reverse_bit_numbering(bits));
                }
            }
            let parents = hashed_parents(parents, layer);
            let layer = UInt32::constant(layer as u32);
            labels.push(crate::witness_gadgets::create_label(cs.namespace(|| "create_label"), &shared.replica_id, parents, layer, node.clone())?);
        }

        let key = labels.last().ok_or(SynthesisError::Unsatisfiable)?;
        let encoded = encode(cs.namespace(|| "encode_node"), key, &data_leaf)?;
        replica_path.synthesize(cs.namespace(|| "comm_r_last_data_inclusion"), &encoded, &shared.comm_r_last)?;

        let own = column_hash(cs.namespace(|| "c_x_column_hash"), &labels)?;
        column_path.synthesize(cs.namespace(|| "c_x_inclusion"), &own, &shared.comm_c)
    }
}

/// The 37 parent labels the labeling hashes: layer 1's 6 DRG parents six
/// times and the first once more; a later layer's 14 parents twice and the
/// first 9 once more.
fn hashed_parents(parents: Vec<Vec<Boolean>>, layer: usize) -> Vec<Vec<Boolean>> {
    let mut out = parents.clone();
    if layer > 1 {
        out.extend_from_slice(&parents);
        out.extend_from_slice(&parents[..9]);
    } else {
        for _ in 0..5 {
            out.extend_from_slice(&parents);
        }
        out.push(parents[0].clone());
    }
    out
}
