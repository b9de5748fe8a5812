//! Our circuit for one PoRep partition: the same R1CS as storage-proofs'
//! `StackedCircuit` (same constraints in the same order, same variable
//! numbering, same public inputs) and the same witness, built from the
//! partition's vanilla proofs or blank (setup, PCE recording).
//!
//! It exists for what `StackedCircuit` cannot do: compute its gadgets'
//! witnesses on values, without their linear combinations
//! (`crate::witness_gadgets`: the labels' SHA-256, the column and Merkle
//! node hashes, the bit decompositions), and generate the witness of its independent
//! challenges on several threads when asked ([`PorepPartition::with_threads`];
//! by default one: with the gadgets' witnesses computed on values, a 32 GiB
//! partition's witness takes a few seconds on one core, and the engine
//! gives a partition more only where cores are free). With a
//! witness-generating constraint system the shared part (replica id,
//! commitments, the comm_r check) is allocated first, as always; then the
//! challenges are synthesized on the threads (`super::threaded_witness`:
//! into a `WitnessOnly`, each writes its aux values in place, where one
//! sequential synthesis puts them: challenges are of one shape), the same
//! witness as one sequential synthesis. Its R1CS is recorded the same
//! way when asked ([`PorepPartition::record_on_threads`]: setup, a
//! circuit's first proof). Any other constraint system (classic proving,
//! bellperson) synthesizes the challenges in order, as `StackedCircuit`
//! does.
//!
//! `challenge`: one challenged node (its labels through
//! `witness_gadgets::create_label`); `column`: a parent's column; its Merkle
//! inclusion proofs are [`super::merkle_path`]'s.

mod challenge;
mod column;

use super::threaded_witness::{in_order_on_threads, witness_on_threads};
use crate::pce::{Part, Recorder};
use crate::witness_gadgets::to_bits_le;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use challenge::{Challenge, Shared};
use super::merkle_path::MerklePath;
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::constants::DefaultPieceHasher;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{Proof, PublicInputs, PublicParams};
use typenum::{U0, U2};

/// A path in tree D (binary, SHA-256).
type DataPath = MerklePath<DefaultPieceHasher, U2, U0, U0>;

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// One PoRep partition circuit for sectors of tree shape `Tree`.
pub struct PorepPartition<Tree: MerkleTreeTrait> {
    replica_id: Option<Fr>,
    comm_d: Option<Fr>,
    comm_r: Option<Fr>,
    comm_r_last: Option<Fr>,
    comm_c: Option<Fr>,
    challenges: Vec<Challenge<Tree>>,
    /// Threads for a witness-only synthesis (`None`: one).
    threads: Option<usize>,
}

impl<Tree: 'static + MerkleTreeTrait> PorepPartition<Tree> {
    /// The circuit of one partition: its challenges' vanilla proofs and the
    /// sector's public values, as `StackedCompound::circuit` takes them.
    pub fn new(
        inputs: &PublicInputs<Domain<Tree>, <DefaultPieceHasher as Hasher>::Domain>,
        proofs: &[Proof<Tree, DefaultPieceHasher>],
    ) -> anyhow::Result<Self> {
        let first = proofs.first().ok_or_else(|| anyhow::anyhow!("a PoRep partition without vanilla proofs"))?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        anyhow::ensure!(proofs.iter().all(|p| p.comm_r_last() == comm_r_last), "inconsistent comm_r_lasts");
        anyhow::ensure!(proofs.iter().all(|p| p.comm_c() == comm_c), "inconsistent comm_cs");
        Ok(PorepPartition {
            replica_id: Some(inputs.replica_id.into()),
            comm_d: inputs.tau.as_ref().map(|t| t.comm_d.into()),
            comm_r: inputs.tau.as_ref().map(|t| t.comm_r.into()),
            comm_r_last: Some(comm_r_last.into()),
            comm_c: Some(comm_c.into()),
            challenges: proofs.iter().map(Challenge::from_vanilla).collect::<anyhow::Result<_>>()?,
            threads: None,
        })
    }

    /// The circuit without a witness, as `StackedCompound::blank_circuit`.
    pub fn blank(pp: &PublicParams<Tree>) -> Self {
        PorepPartition {
            replica_id: None,
            comm_d: None,
            comm_r: None,
            comm_r_last: None,
            comm_c: None,
            challenges: (0..pp.challenges.num_challenges_per_partition()).map(|_| Challenge::blank(pp)).collect(),
            threads: None,
        }
    }

    /// Generates a witness on `n` threads (at least one).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = Some(n.max(1));
        self
    }

    /// Records the partition's R1CS (and its witness, when `W`) into `cs`,
    /// its challenges on `threads` threads: each into a [`Part`] of its own
    /// that stands in for the shared values, appended in challenge order,
    /// which is the sequential recording exactly. A 32 GiB partition's 18
    /// challenges are ~7M constraints each, so its recording (setup, a
    /// circuit's first proof) spreads over up to 18 cores; the appends
    /// (copying each part's rows) stay sequential.
    pub(crate) fn record_on_threads<const W: bool>(mut self, cs: &mut Recorder<W>, threads: usize) -> Result<(), SynthesisError> {
        let shared = self.shared(cs)?;
        let imports = shared.variables();
        let challenges = std::mem::take(&mut self.challenges);
        let record = |i, c: Challenge<Tree>| {
            let (mut part, stand_ins) = Part::new(imports.clone(), |own| shared.stand_ins(own))?;
            c.synthesize(part.cs().namespace(|| format!("challenge_{i}")), &stand_ins)?;
            Ok(part)
        };
        in_order_on_threads(challenges, threads, record, |part| cs.append_part(part))
    }

    /// Allocates what every challenge shares, in StackedCircuit's order.
    fn shared<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<Shared, SynthesisError> {
        let alloc = |cs: &mut CS, name: &'static str, v: Option<Fr>| {
            AllocatedNum::alloc(cs.namespace(|| name), || v.ok_or(SynthesisError::AssignmentMissing))
        };
        let replica_id = alloc(cs, "replica_id", self.replica_id)?;
        replica_id.inputize(cs.namespace(|| "replica_id_input"))?;
        let replica_id_bits = reverse_bit_numbering(to_bits_le(cs.namespace(|| "replica_id_bits"), &replica_id)?);
        let comm_d = alloc(cs, "comm_d", self.comm_d)?;
        comm_d.inputize(cs.namespace(|| "comm_d_input"))?;
        let comm_r = alloc(cs, "comm_r", self.comm_r)?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let comm_r_last = alloc(cs, "comm_r_last", self.comm_r_last)?;
        let comm_c = alloc(cs, "comm_c", self.comm_c)?;
        let hash = <Tree::Hasher as Hasher>::Function::hash2_circuit(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            &comm_c,
            &comm_r_last,
        )?;
        constraint::equal(cs, || "enforce comm_r = H(comm_c || comm_r_last)", &comm_r, &hash);
        Ok(Shared { comm_d, comm_c, comm_r_last, replica_id: replica_id_bits })
    }
}

impl<Tree: 'static + MerkleTreeTrait> Circuit<Fr> for PorepPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(mut self, cs: &mut CS) -> Result<(), SynthesisError> {
        let shared = self.shared(cs)?;
        let challenges = std::mem::take(&mut self.challenges);
        let threads = self.threads.unwrap_or(1).min(challenges.len());
        if cs.is_witness_generator() && threads > 1 {
            return witness_on_threads(cs, challenges, threads, |i, c, w| {
                c.synthesize(w.namespace(|| format!("challenge_{i}")), &shared)
            });
        }
        for (i, c) in challenges.into_iter().enumerate() {
            c.synthesize(cs.namespace(|| format!("challenge_{i}")), &shared)?;
        }
        Ok(())
    }
}
