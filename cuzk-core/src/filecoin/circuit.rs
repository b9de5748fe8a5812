//! One partition circuit of any Filecoin proof type, as a single concrete
//! type: the engine's synthesis workers, our setup and bellperson (the
//! test oracle) all take it as a `Circuit<Fr>`.
//!
//! filecoin-proofs' circuits are generic over the Merkle tree shape; the
//! five sector sizes use three shapes (2 KiB, 8 MiB and 512 MiB share one),
//! so three families × three shapes cover everything. PoRep partitions are
//! our [`PorepPartition`] (the R1CS of storage-proofs' `StackedCircuit`),
//! PoSt partitions our [`PostPartition`] (that of `FallbackPoStCircuit`),
//! SnapDeals partitions our [`UpdatePartition`] (that of
//! storage-proofs-update's `EmptySectorUpdateCircuit`), all with their
//! witnesses computed on values.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use super::porep_circuit::PorepPartition;
use super::post_circuit::PostPartition;
use filecoin_proofs::constants::{SectorShape2KiB, SectorShape32GiB, SectorShape64GiB};
use super::update_circuit::UpdatePartition;
use crate::cs::{ProvingAssignment, WitnessOnly};
use crate::partitioned::AnyCircuit;
use crate::pce::{record_by, record_with_witness_by, Pce, PceError, Recorder};

/// Tree shape of 2 KiB, 8 MiB and 512 MiB sectors.
pub type ShapeBase = SectorShape2KiB;
/// Tree shape of 32 GiB sectors.
pub type ShapeSub8 = SectorShape32GiB;
/// Tree shape of 64 GiB sectors.
pub type ShapeTop2 = SectorShape64GiB;

pub enum FilecoinCircuit {
    PorepBase(PorepPartition<ShapeBase>),
    PorepSub8(PorepPartition<ShapeSub8>),
    PorepTop2(PorepPartition<ShapeTop2>),
    PostBase(PostPartition<ShapeBase>),
    PostSub8(PostPartition<ShapeSub8>),
    PostTop2(PostPartition<ShapeTop2>),
    UpdateBase(UpdatePartition<ShapeBase>),
    UpdateSub8(UpdatePartition<ShapeSub8>),
    UpdateTop2(UpdatePartition<ShapeTop2>),
}

impl Circuit<Fr> for FilecoinCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        use FilecoinCircuit::*;
        match self {
            PorepBase(c) => c.synthesize(cs),
            PorepSub8(c) => c.synthesize(cs),
            PorepTop2(c) => c.synthesize(cs),
            PostBase(c) => c.synthesize(cs),
            PostSub8(c) => c.synthesize(cs),
            PostTop2(c) => c.synthesize(cs),
            UpdateBase(c) => c.synthesize(cs),
            UpdateSub8(c) => c.synthesize(cs),
            UpdateTop2(c) => c.synthesize(cs),
        }
    }
}

impl FilecoinCircuit {
    /// A PoRep or PoSt partition generates its witness on `n` threads (one
    /// by default); the other kinds are unchanged.
    pub fn with_witness_threads(self, n: usize) -> Self {
        use FilecoinCircuit::*;
        match self {
            PorepBase(c) => PorepBase(c.with_threads(n)),
            PorepSub8(c) => PorepSub8(c.with_threads(n)),
            PorepTop2(c) => PorepTop2(c.with_threads(n)),
            PostBase(c) => PostBase(c.with_threads(n)),
            PostSub8(c) => PostSub8(c.with_threads(n)),
            PostTop2(c) => PostTop2(c.with_threads(n)),
            other => other,
        }
    }

    /// The circuit's R1CS as [`crate::pce::record`] records it (setup,
    /// `cuzk pce build`), a PoRep or SnapDeals partition's challenges on
    /// `threads` threads; a PoSt partition as its synthesis does (its
    /// sectors are on every core already).
    pub fn record(self, circuit_id: &str, threads: usize) -> Result<Pce, PceError> {
        record_by(circuit_id, |cs| self.record_into(cs, threads))
    }

    /// The circuit's R1CS and witness as [`crate::pce::record_with_witness`]
    /// records them (a circuit's first proof), on `threads` threads as
    /// [`FilecoinCircuit::record`].
    pub fn record_with_witness(self, circuit_id: &str, threads: usize) -> Result<(Pce, WitnessOnly), PceError> {
        record_with_witness_by(circuit_id, |cs| self.record_into(cs, threads))
    }

    fn record_into<const W: bool>(self, cs: &mut Recorder<W>, threads: usize) -> Result<(), SynthesisError> {
        use FilecoinCircuit::*;
        match self {
            PorepBase(c) => c.record_on_threads(cs, threads),
            PorepSub8(c) => c.record_on_threads(cs, threads),
            PorepTop2(c) => c.record_on_threads(cs, threads),
            UpdateBase(c) => c.record_on_threads(cs, threads),
            UpdateSub8(c) => c.record_on_threads(cs, threads),
            UpdateTop2(c) => c.record_on_threads(cs, threads),
            other => other.synthesize(cs),
        }
    }
}

/// One partition as the engine takes it ([`AnyCircuit`]): recorded through
/// [`FilecoinCircuit::record_with_witness`] on every core, else as any
/// circuit.
pub(crate) struct EnginePartition(pub FilecoinCircuit);

impl AnyCircuit for EnginePartition {
    fn classic(self: Box<Self>) -> Result<ProvingAssignment, SynthesisError> {
        Box::new(self.0).classic()
    }
    fn witness(self: Box<Self>, cs: WitnessOnly) -> Result<WitnessOnly, SynthesisError> {
        Box::new(self.0).witness(cs)
    }
    fn record(self: Box<Self>, circuit_id: &str) -> Result<(Pce, WitnessOnly), PceError> {
        self.0.record_with_witness(circuit_id, crate::par::threads())
    }
}

/// Wraps a concrete circuit of shape `Tree` into the enum.
pub(crate) trait IntoFilecoinCircuit {
    fn into_filecoin(self) -> FilecoinCircuit;
}

macro_rules! into_circuit {
    ($ty:ty, $variant:ident) => {
        impl IntoFilecoinCircuit for $ty {
            fn into_filecoin(self) -> FilecoinCircuit {
                FilecoinCircuit::$variant(self)
            }
        }
    };
}
into_circuit!(PorepPartition<ShapeBase>, PorepBase);
into_circuit!(PorepPartition<ShapeSub8>, PorepSub8);
into_circuit!(PorepPartition<ShapeTop2>, PorepTop2);
into_circuit!(PostPartition<ShapeBase>, PostBase);
into_circuit!(PostPartition<ShapeSub8>, PostSub8);
into_circuit!(PostPartition<ShapeTop2>, PostTop2);
into_circuit!(UpdatePartition<ShapeBase>, UpdateBase);
into_circuit!(UpdatePartition<ShapeSub8>, UpdateSub8);
into_circuit!(UpdatePartition<ShapeTop2>, UpdateTop2);

/// Calls `$f::<Shape>(args)` for the tree shape of a sector size.
macro_rules! by_shape {
    ($size:expr, $f:ident, $($args:expr),* $(,)?) => {{
        use filecoin_proofs::constants::*;
        match $size {
            SECTOR_SIZE_2_KIB | SECTOR_SIZE_8_MIB | SECTOR_SIZE_512_MIB => $f::<$crate::filecoin::circuit::ShapeBase>($($args),*),
            SECTOR_SIZE_32_GIB => $f::<$crate::filecoin::circuit::ShapeSub8>($($args),*),
            SECTOR_SIZE_64_GIB => $f::<$crate::filecoin::circuit::ShapeTop2>($($args),*),
            other => Err($crate::filecoin::FilecoinError::Unsupported {
                what: format!("sector size {other}"),
                why: "Filecoin supports 2 KiB, 8 MiB, 512 MiB, 32 GiB and 64 GiB",
            }),
        }
    }};
}
pub(crate) use by_shape;
