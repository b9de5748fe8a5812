//! A proof request as the daemon receives it (the fields of
//! `SubmitProofRequest` that matter for the proof), before any decoding.

use crate::proof_kind::ProofKind;

/// What Curio sends for one proof: the one shape a Filecoin request has
/// from the gRPC message to the circuits. Bytes are kept raw here; decoding
/// and validation happen once, in `prepare`, which names what is wrong.
#[derive(Clone, Debug)]
pub struct ProofRequest {
    pub kind: ProofKind,
    /// Go `abi.Registered*Proof` number. Ignored for PoRep: the C1 output
    /// carries its own registered proof.
    pub registered_proof: u64,
    /// Sector size in bytes; 0 = not given (not checked).
    pub sector_size: u64,
    /// PoRep: the Curio envelope `{"SectorNum","Phase1Out","SectorSize"}`.
    pub vanilla_proof: Vec<u8>,
    /// PoSt: bincode `FallbackPoStSectorProof`, one per sector; SnapDeals:
    /// bincode `PartitionProof`, one per partition.
    pub vanilla_proofs: Vec<Vec<u8>>,
    pub sector_number: u64,
    /// The 32-byte prover id; see [`prover_id_from_miner`].
    pub prover_id: [u8; 32],
    /// PoSt challenge randomness (32 bytes).
    pub randomness: Vec<u8>,
    /// WindowPoSt partition index.
    pub partition_index: u32,
    /// SnapDeals commitments (32 bytes each).
    pub comm_r_old: Vec<u8>,
    pub comm_r_new: Vec<u8>,
    pub comm_d_new: Vec<u8>,
}

impl ProofRequest {
    /// An empty request of `kind` for miner `miner_id`; fill in the rest.
    pub fn new(kind: ProofKind, miner_id: u64) -> Self {
        Self {
            kind,
            registered_proof: 0,
            sector_size: 0,
            vanilla_proof: Vec::new(),
            vanilla_proofs: Vec::new(),
            sector_number: 0,
            prover_id: prover_id_from_miner(miner_id),
            randomness: Vec::new(),
            partition_index: 0,
            comm_r_old: Vec::new(),
            comm_r_new: Vec::new(),
            comm_d_new: Vec::new(),
        }
    }
}

/// Curio's prover id: the miner's actor id as an unsigned LEB128 varint
/// (the payload of its ID address), zero-padded to 32 bytes.
pub fn prover_id_from_miner(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[i] = byte;
            return out;
        }
        out[i] = byte | 0x80;
        i += 1;
    }
}
