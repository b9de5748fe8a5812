//! The check of a PoRep C1 output's vanilla proofs at submission: every
//! fact the partition circuit will enforce, checked with filecoin-proofs'
//! own functions, so that bad input is refused in milliseconds with the
//! partition, challenge and part that is wrong, not after minutes of
//! synthesis and proving.
//!
//! filecoin-proofs' `StackedDrg::verify_all_partitions` alone is not
//! enough: it checks that the data (tree_d) and replica (tree_r_last)
//! inclusion proofs open the challenged node and have the right roots, but
//! not that their paths hash to those roots, and it checks the labeling
//! proofs' own copies of the parent labels, while the circuit computes the
//! labels from the parents' columns. A C1 output with one byte of a
//! comm_r_last path changed passes it, and only the proof's self-check
//! (after the whole prove) finds out. So, per challenge:
//! - the shape the circuit is built for: path lengths and arities of every
//!   inclusion proof, the number of parents, rows per column;
//! - filecoin-proofs' own check ([`Proof::verify`]);
//! - the data and replica paths hash to their roots
//!   ([`MerkleProofTrait::verify`]), the replica root is the partition's;
//! - each layer's label from the parents' columns, and the encoding of the
//!   data leaf into the replica leaf ([`LabelingProof`], [`EncodingProof`]),
//!   as the circuit computes them.
//!
//! The challenges run in parallel; the first fault in (partition,
//! challenge) order is the one reported.

use filecoin_hashers::{Hasher, HashFunction};
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher};
use std::sync::atomic::{AtomicBool, Ordering};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{base_path_length, MerkleProof, MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_porep::stacked::{
    ColumnProof, EncodingProof, LabelingProof, Proof, PublicInputs, PublicParams, ReplicaColumnProof, TOTAL_PARENTS,
};
use typenum::Unsigned;

type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type Inputs<Tree> = PublicInputs<TreeDomain<Tree>, DefaultPieceDomain>;
type Vanilla<Tree> = Proof<Tree, DefaultPieceHasher>;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;
type Column<Tree> = ColumnProof<TreeProof<Tree>>;

/// Checks every partition's vanilla proofs against the public inputs the
/// verifier derives. The error names the first fault found.
pub(crate) fn check_partitions<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    inputs: &Inputs<Tree>,
    partitions: &[Vec<Vanilla<Tree>>],
) -> Result<(), String> {
    let tau = inputs.tau.as_ref().ok_or("the public inputs have no commitments")?;
    if inputs.seed.is_none() {
        return Err("the C1 output has no seed".into());
    }
    let nodes = pp.graph.size();
    let mut tasks = Vec::new();
    for (k, proofs) in partitions.iter().enumerate() {
        let challenges = inputs.challenges(&pp.challenges, nodes, Some(k));
        if proofs.len() != challenges.len() {
            return Err(format!(
                "partition {k} has {} challenge proofs, the seed derives {} challenges",
                proofs.len(),
                challenges.len()
            ));
        }
        // The circuit takes comm_c and comm_r_last from the first proof.
        let first = &proofs[0];
        let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&first.comm_c(), &first.comm_r_last());
        if comm_r != tau.comm_r {
            return Err(format!(
                "partition {k}: comm_r is not the hash of the proofs' comm_c and comm_r_last (wrong comm_r, or the tree roots in the proofs are wrong)"
            ));
        }
        tasks.extend(challenges.into_iter().enumerate().map(|(i, c)| (k, i, c)));
    }
    // Later challenges stop early once one fault is known.
    let stop = AtomicBool::new(false);
    let faults = crate::par::map_ranges(tasks.len(), 1, |range| {
        for t in range {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let (k, i, challenge) = tasks[t];
            let proofs = &partitions[k];
            if let Err(why) = check_challenge(pp, inputs, &proofs[i], &proofs[0], challenge) {
                stop.store(true, Ordering::Relaxed);
                return Some((t, format!("partition {k}, challenge {i} (node {challenge}): {why}")));
            }
        }
        None
    });
    match faults.into_iter().flatten().min_by_key(|(t, _)| *t) {
        Some((_, why)) => Err(why),
        None => Ok(()),
    }
}

fn check_challenge<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    inputs: &Inputs<Tree>,
    proof: &Vanilla<Tree>,
    first: &Vanilla<Tree>,
    challenge: usize,
) -> Result<(), String> {
    let graph = &pp.graph;
    let (nodes, layers) = (graph.size(), pp.num_layers);
    let tau = inputs.tau.as_ref().ok_or("the public inputs have no commitments")?;
    let columns = &proof.replica_column_proofs;
    let (drg, exp) = (graph.base_graph().degree(), graph.expansion_degree());

    // The shape the circuit is built for (a wrong one would also make
    // filecoin-proofs' check index out of bounds).
    if columns.drg_parents.len() != drg || columns.exp_parents.len() != exp {
        return Err(format!(
            "{} base and {} expansion parent columns, the graph has {drg} and {exp}",
            columns.drg_parents.len(),
            columns.exp_parents.len()
        ));
    }
    if proof.labeling_proofs.len() != layers {
        return Err(format!("{} labeling proofs for {layers} layers", proof.labeling_proofs.len()));
    }
    shape::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity, _>("comm_r_last (tree_r_last) path", &proof.comm_r_last_proof, nodes)?;
    shape::<typenum::U2, typenum::U0, typenum::U0, _>("comm_d (tree_d) path", &proof.comm_d_proofs, nodes)?;
    let all = std::iter::once(("the challenged node's", &columns.c_x))
        .chain(columns.drg_parents.iter().map(|c| ("a base parent's", c)))
        .chain(columns.exp_parents.iter().map(|c| ("an expansion parent's", c)));
    for (whose, column) in all {
        let (rows, path) = column_parts::<Tree>(column).map_err(|e| format!("{whose} column: {e}"))?;
        if rows != layers {
            return Err(format!("{whose} column has {rows} rows for {layers} layers"));
        }
        shape::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity, _>(&format!("{whose} column (tree_c) path"), &path, nodes)?;
    }

    // filecoin-proofs' own check: challenge openings, comm_d, the column
    // proofs against comm_c, the labeling proofs, the encoding.
    if proof.comm_c() != first.comm_c() {
        return Err("its comm_c (tree_c root) differs from the partition's first proof".into());
    }
    if proof.comm_r_last() != first.comm_r_last() {
        return Err("its comm_r_last (tree_r_last root) differs from the partition's first proof".into());
    }
    if !proof.comm_d_proofs.proves_challenge(challenge) {
        return Err("the comm_d (tree_d) path opens another node".into());
    }
    if proof.comm_d_proofs.root() != tau.comm_d {
        return Err("the comm_d (tree_d) path's root is not comm_d".into());
    }
    if !proof.comm_r_last_proof.proves_challenge(challenge) {
        return Err("the comm_r_last (tree_r_last) path opens another node".into());
    }
    if !proof.verify(pp, inputs, challenge, graph) {
        return Err(
            "filecoin-proofs' check fails: a column does not open tree_c at its node (a column row or tree_c path is wrong), or a labeling or encoding proof is wrong"
                .into(),
        );
    }

    // What the circuit checks beyond it.
    if !proof.comm_d_proofs.verify() {
        return Err("the comm_d (tree_d) path does not hash to comm_d (a path hash or the data leaf is wrong)".into());
    }
    if !proof.comm_r_last_proof.verify() {
        return Err(
            "the comm_r_last (tree_r_last) path does not hash to comm_r_last (a path hash or the replica leaf is wrong)".into(),
        );
    }
    let replica_id = &inputs.replica_id;
    let at = |c: &Column<Tree>, layer: usize| *c.get_node_at_layer(layer).expect("rows counted above");
    for layer in 1..=layers {
        let parents = parent_labels(columns, layer, &at);
        let label = LabelingProof::<Tree::Hasher>::new(layer as u32, challenge as u64, parents);
        if !label.verify(replica_id, &at(&columns.c_x, layer)) {
            return Err(format!(
                "the challenged node's label at layer {layer} is not the labeling of its parents' columns"
            ));
        }
    }
    let key = EncodingProof::<Tree::Hasher>::new(layers as u32, challenge as u64, parent_labels(columns, layers, &at));
    if !key.verify::<DefaultPieceHasher>(replica_id, &proof.comm_r_last_proof.leaf(), &proof.comm_d_proofs.leaf()) {
        return Err("the replica leaf is not the data leaf encoded with the last layer's key".into());
    }
    Ok(())
}

/// The parent labels that make a node's label at `layer`, as
/// filecoin-proofs orders them: the base parents at this layer, the
/// expansion parents at the layer below (none on layer 1), repeated to
/// [`TOTAL_PARENTS`].
fn parent_labels<P: MerkleProofTrait, D: Copy>(
    columns: &ReplicaColumnProof<P>,
    layer: usize,
    at: &impl Fn(&ColumnProof<P>, usize) -> D,
) -> Vec<D> {
    let base = columns.drg_parents.iter().map(|c| at(c, layer));
    let labels: Vec<D> =
        if layer == 1 { base.collect() } else { base.chain(columns.exp_parents.iter().map(|c| at(c, layer - 1))).collect() };
    labels.iter().copied().cycle().take(TOTAL_PARENTS).collect()
}

/// Checks that an inclusion proof has the levels and arities of a tree of
/// `nodes` leaves with arities (A, B, C): the circuit is built for them.
fn shape<A: Unsigned, B: Unsigned, C: Unsigned, P: MerkleProofTrait>(what: &str, proof: &P, nodes: usize) -> Result<(), String> {
    let mut arities = vec![A::to_usize(); base_path_length::<A, B, C>(nodes)];
    arities.extend([B::to_usize(), C::to_usize()].into_iter().filter(|&a| a > 0));
    let path = proof.path();
    if path.len() != arities.len() {
        return Err(format!("the {what} has {} levels, the tree has {}", path.len(), arities.len()));
    }
    for (level, ((hashes, index), arity)) in path.iter().zip(arities).enumerate() {
        if hashes.len() + 1 != arity || *index >= arity {
            return Err(format!(
                "the {what} has {} siblings and index {index} at level {level}, the tree's arity there is {arity}",
                hashes.len()
            ));
        }
    }
    Ok(())
}

/// A column's number of rows and its tree_c inclusion proof.
/// filecoin-proofs keeps both private (and indexes the rows without a
/// bounds check), so they are read from the column's serialized form (a
/// few rows and one path: cheap).
fn column_parts<Tree: MerkleTreeTrait>(column: &Column<Tree>) -> Result<(usize, TreeProof<Tree>), String> {
    let mut value = serde_json::to_value(column).map_err(|e| format!("does not serialize: {e}"))?;
    let rows = value["column"]["rows"].as_array().map(Vec::len).ok_or("has no rows")?;
    let path = serde_json::from_value(value["inclusion_proof"].take()).map_err(|e| format!("inclusion proof: {e}"))?;
    Ok((rows, path))
}
