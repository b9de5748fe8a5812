//! A PoRep C1 output at any sector size, valid in every part the C2
//! circuit and filecoin-proofs' verifier see, made without a sealed sector.
//!
//! What a real `seal_commit_phase1` reads from the sector's files is made
//! here from the seed, in the order filecoin-proofs fixes it:
//! 1. the data (tree_d, comm_d): one pseudo-random block repeated through
//!    the sector ([`PeriodicTree`]), so any leaf opens against comm_d;
//! 2. the replica id from prover id, sector number, ticket, comm_d and
//!    porep id, and the challenges from it and the seed (filecoin-proofs'
//!    own functions);
//! 3. the columns (one label per layer) of every challenged node and of
//!    its parents: a challenged node's labels from the labeling function
//!    over its parents' labels, layer by layer, in node order within a
//!    layer (the order labels depend on each other); a parent that is not
//!    itself challenged has pseudo-random labels (nothing opens its own
//!    parents);
//! 4. a challenged node's replica leaf: its data leaf encoded with its
//!    last layer's label;
//! 5. tree_c over the column hashes and tree_r_last over the replica
//!    leaves, materialized along the opened paths ([`SparseTree`]), and
//!    comm_r = H(comm_c, comm_r_last).
//!
//! Only interactive PoRep (the V1_1 registered proofs) is generated: its
//! challenges do not depend on comm_r, so the trees can be built after
//! them.

use super::sparse_tree::{prf, prf_bytes, PeriodicTree, SparseTree};
use crate::filecoin::error::{FilecoinError, Result};
use crate::filecoin::kind::ProofType;
use crate::proof_kind::ProofKind;
use crate::filecoin::porep_check::check_partitions;
use crate::filecoin::request::prover_id_from_miner;
use blstrs::Scalar as Fr;
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{Domain, HashFunction, Hasher};
use filecoin_proofs::constants::*;
use filecoin_proofs::parameters::public_params;
use filecoin_proofs::{DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use filecoin_proofs_api::RegisteredSealProof;
use std::collections::{BTreeMap, BTreeSet};
use storage_proofs_core::drgraph::Graph;
use storage_proofs_core::merkle::{MerkleProof, MerkleTreeTrait};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_porep::stacked::{
    generate_replica_id, Challenges, ColumnProof, EncodingProof, LabelingProof, Proof, PublicInputs, PublicParams,
    ReplicaColumnProof, StackedDrg, Tau, TOTAL_PARENTS,
};
use typenum::{U0, U2};

/// Leaves of the repeated data block (2 MiB of data).
const DATA_BLOCK_NODES: usize = 1 << 16;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct PorepSpec {
    /// 2 KiB, 8 MiB, 512 MiB, 32 GiB or 64 GiB, in bytes.
    pub sector_size: u64,
    /// Everything random derives from it.
    pub seed: u64,
    /// The prover id is Curio's for this miner id.
    pub miner_id: u64,
    pub sector_num: u64,
}

/// A generated C1 output and the public values a verifier needs with it.
pub struct PorepWorkload {
    pub c1: SealCommitPhase1Output,
    pub registered_proof: RegisteredSealProof,
    pub prover_id: [u8; 32],
    pub sector_num: u64,
}

/// Generates the C1 output of `spec` (deterministic in it) and checks it
/// with filecoin-proofs' vanilla verifier and our submit check.
pub fn porep(spec: PorepSpec) -> Result<PorepWorkload> {
    let ProofType::Seal(rp) = ProofType::current(ProofKind::PorepSealCommit, spec.sector_size)? else {
        unreachable!("the current PoRep proof type is a seal proof")
    };
    let prover_id = prover_id_from_miner(spec.miner_id);
    let c1 = match spec.sector_size {
        SECTOR_SIZE_2_KIB => c1_output::<SectorShape2KiB>(rp, &spec, &prover_id, VanillaSealProof::StackedDrg2KiBV1),
        SECTOR_SIZE_8_MIB => c1_output::<SectorShape8MiB>(rp, &spec, &prover_id, VanillaSealProof::StackedDrg8MiBV1),
        SECTOR_SIZE_512_MIB => c1_output::<SectorShape512MiB>(rp, &spec, &prover_id, VanillaSealProof::StackedDrg512MiBV1),
        SECTOR_SIZE_32_GIB => c1_output::<SectorShape32GiB>(rp, &spec, &prover_id, VanillaSealProof::StackedDrg32GiBV1),
        SECTOR_SIZE_64_GIB => c1_output::<SectorShape64GiB>(rp, &spec, &prover_id, VanillaSealProof::StackedDrg64GiBV1),
        other => unreachable!("ProofType::current accepted sector size {other}"),
    }?;
    Ok(PorepWorkload { c1, registered_proof: rp, prover_id, sector_num: spec.sector_num })
}

type Vanilla<Tree> = Proof<Tree, DefaultPieceHasher>;
type TreeDomain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;

fn failed(what: &str) -> impl FnOnce(anyhow::Error) -> FilecoinError + '_ {
    move |e| FilecoinError::Workload(format!("{what}: {e:#}"))
}

fn c1_output<Tree: 'static + MerkleTreeTrait>(
    rp: RegisteredSealProof,
    spec: &PorepSpec,
    prover_id: &[u8; 32],
    wrap: fn(Vec<Vec<Vanilla<Tree>>>) -> VanillaSealProof,
) -> Result<SealCommitPhase1Output> {
    let config = rp.as_v1_config();
    let pp = public_params::<Tree>(&config).map_err(failed("public params"))?;
    if !matches!(pp.challenges, Challenges::Interactive(_)) {
        return Err(FilecoinError::Unsupported {
            what: format!("{rp:?}"),
            why: "the workload generator makes interactive PoRep (its challenges do not depend on comm_r)",
        });
    }
    let nodes = pp.graph.size();
    let seed = spec.seed;
    let ticket = prf_bytes(seed, "ticket", 0, 0);
    let challenge_seed = prf_bytes(seed, "seed", 0, 0);

    // 1. The data and comm_d.
    let block = nodes.min(DATA_BLOCK_NODES);
    let data = PeriodicTree::<Sha256Hasher>::new::<U2, U0, U0>(nodes, block, nodes, |i| prf(seed, "data", (i % block) as u64, 0));
    let comm_d: DefaultPieceDomain = data.root();

    // 2. Replica id and challenges.
    let replica_id = generate_replica_id::<Tree::Hasher, _>(prover_id, spec.sector_num, &ticket, comm_d, &config.porep_id);
    let inputs = |tau| PublicInputs { replica_id, seed: Some(challenge_seed), tau, k: None };
    let partitions = usize::from(config.partitions);
    let challenges: Vec<Vec<usize>> =
        (0..partitions).map(|k| inputs(None).challenges(&pp.challenges, nodes, Some(k))).collect();

    // 3. Columns, 4. replica leaves.
    let parents: BTreeMap<usize, Vec<u32>> = challenges
        .iter()
        .flatten()
        .map(|&c| {
            let mut p = vec![0u32; pp.graph.degree()];
            pp.graph.parents(c, &mut p).map_err(failed("graph parents"))?;
            Ok((c, p))
        })
        .collect::<Result<_>>()?;
    let columns = columns(&pp, seed, &replica_id, &parents)?;
    let layers = pp.num_layers;
    let replica: BTreeMap<usize, TreeDomain<Tree>> = parents
        .keys()
        .map(|&c| {
            let key: Fr = columns[&c][layers - 1].into();
            let value: Fr = data.node(0, c).into();
            (c, (key + value).into())
        })
        .collect();

    // 5. tree_c, tree_r_last, comm_r.
    let tree_c = SparseTree::<Tree::Hasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
        nodes,
        columns.iter().map(|(&n, rows)| (n, column_hash::<Tree>(n, rows))),
        |level, i| prf(seed, "tree_c", level as u64, i as u64),
    );
    let tree_r = SparseTree::<Tree::Hasher>::new::<Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity>(
        nodes,
        replica.iter().map(|(&n, v)| (n, *v)),
        |level, i| prf(seed, "tree_r_last", level as u64, i as u64),
    );
    let tree_d = SparseTree::<Sha256Hasher>::new::<U2, U0, U0>(
        nodes,
        parents.keys().map(|&c| (c, data.node(0, c))),
        |level, i| data.node(level, i),
    );
    let comm_r = <Tree::Hasher as Hasher>::Function::hash2(&tree_c.root(), &tree_r.root());

    let column_proof = |n: u32| ColumnProof::new(n, columns[&(n as usize)].clone(), tree_c.proof(n as usize));
    let degree = pp.graph.base_graph().degree();
    let proofs: Vec<Vec<Vanilla<Tree>>> = challenges
        .iter()
        .map(|cs| {
            cs.iter()
                .map(|&c| {
                    let (base, exp) = parents[&c].split_at(degree);
                    let labeling_proofs: Vec<LabelingProof<Tree::Hasher>> = (1..=layers)
                        .map(|layer| LabelingProof::new(layer as u32, c as u64, parent_labels(&columns, base, exp, layer)))
                        .collect();
                    Proof {
                        comm_d_proofs: tree_d.proof(c),
                        comm_r_last_proof: tree_r.proof(c),
                        replica_column_proofs: ReplicaColumnProof {
                            c_x: column_proof(c as u32),
                            drg_parents: base.iter().map(|&p| column_proof(p)).collect(),
                            exp_parents: exp.iter().map(|&p| column_proof(p)).collect(),
                        },
                        labeling_proofs,
                        encoding_proof: EncodingProof::new(
                            layers as u32,
                            c as u64,
                            parent_labels(&columns, base, exp, layers),
                        ),
                    }
                })
                .collect()
        })
        .collect();

    // What filecoin-proofs' seal_commit_phase1 checks before it returns,
    // and what our daemon checks at submit.
    let full = inputs(Some(Tau { comm_d, comm_r }));
    let valid = StackedDrg::<Tree, DefaultPieceHasher>::verify_all_partitions(&pp, &full, &proofs)
        .map_err(failed("filecoin-proofs' vanilla verifier"))?;
    if !valid {
        return Err(FilecoinError::Workload("filecoin-proofs' vanilla verifier rejects the generated proofs".into()));
    }
    check_partitions(&pp, &full, &proofs).map_err(|why| FilecoinError::Workload(format!("the submit check: {why}")))?;

    let bytes = |d: &dyn AsRef<[u8]>| -> [u8; 32] { d.as_ref().try_into().expect("32-byte domain") };
    Ok(SealCommitPhase1Output {
        registered_proof: rp,
        vanilla_proofs: wrap(proofs),
        comm_r: bytes(&comm_r),
        comm_d: bytes(&comm_d),
        replica_id: Domain::try_from_bytes(replica_id.as_ref()).map_err(failed("replica id"))?,
        seed: challenge_seed,
        ticket,
    })
}

/// The column (one label per layer) of every challenged node and of each
/// of its parents.
fn columns<Tree: 'static + MerkleTreeTrait>(
    pp: &PublicParams<Tree>,
    seed: u64,
    replica_id: &TreeDomain<Tree>,
    parents: &BTreeMap<usize, Vec<u32>>,
) -> Result<BTreeMap<usize, Vec<TreeDomain<Tree>>>> {
    let layers = pp.num_layers;
    let degree = pp.graph.base_graph().degree();
    let challenged: BTreeSet<usize> = parents.keys().copied().collect();
    let mut columns: BTreeMap<usize, Vec<TreeDomain<Tree>>> = BTreeMap::new();
    for p in parents.values().flatten().map(|&p| p as usize).chain(challenged.iter().copied()) {
        columns
            .entry(p)
            .or_insert_with(|| (0..layers).map(|row| prf(seed, "label", p as u64, row as u64)).collect());
    }
    // A label depends on its base parents' labels in its layer (all of
    // lower index) and its expansion parents' in the layer below: layer by
    // layer, ascending node order computes each after its inputs.
    for layer in 1..=layers {
        for &c in &challenged {
            let (base, exp) = parents[&c].split_at(degree);
            if let Some(&p) = base.iter().find(|&&p| p as usize >= c && challenged.contains(&(p as usize))) {
                return Err(FilecoinError::Workload(format!("node {c} has base parent {p}, not of lower index")));
            }
            let label = label::<Tree>(replica_id, layer, c, &parent_labels(&columns, base, exp, layer));
            columns.get_mut(&c).expect("every challenged node has a column")[layer - 1] = label;
        }
    }
    Ok(columns)
}

/// The labels a node's label at `layer` hashes, as filecoin-proofs orders
/// them: its base parents' at this layer, its expansion parents' at the
/// layer below (none on layer 1), repeated to [`TOTAL_PARENTS`].
fn parent_labels<D: Copy>(columns: &BTreeMap<usize, Vec<D>>, base: &[u32], exp: &[u32], layer: usize) -> Vec<D> {
    let row = |p: &u32, layer: usize| columns[&(*p as usize)][layer - 1];
    let labels: Vec<D> = if layer == 1 {
        base.iter().map(|p| row(p, layer)).collect()
    } else {
        base.iter().map(|p| row(p, layer)).chain(exp.iter().map(|p| row(p, layer - 1))).collect()
    };
    labels.iter().copied().cycle().take(TOTAL_PARENTS).collect()
}

/// SDR's labeling function: SHA-256 of the replica id, the layer, the node
/// and its parents' labels, truncated to a field element.
fn label<Tree: MerkleTreeTrait>(replica_id: &TreeDomain<Tree>, layer: usize, node: usize, parents: &[TreeDomain<Tree>]) -> TreeDomain<Tree> {
    let mut bytes = Vec::with_capacity(64 + 32 * parents.len());
    bytes.extend_from_slice(replica_id.as_ref());
    bytes.extend_from_slice(&(layer as u32).to_be_bytes());
    bytes.extend_from_slice(&(node as u64).to_be_bytes());
    bytes.resize(64, 0);
    for p in parents {
        bytes.extend_from_slice(p.as_ref());
    }
    let hash = <Sha256Hasher as Hasher>::Function::hash(&bytes);
    TreeDomain::<Tree>::try_from_bytes(hash.as_ref()).expect("a truncated SHA-256 is a field element")
}

/// A column's tree_c leaf: the Poseidon hash of its labels.
fn column_hash<Tree: MerkleTreeTrait>(node: usize, rows: &[TreeDomain<Tree>]) -> TreeDomain<Tree> {
    let proof: TreeProof<Tree> = MerkleProof::new(0);
    ColumnProof::new(node as u32, rows.to_vec(), proof).column_hash().into()
}
