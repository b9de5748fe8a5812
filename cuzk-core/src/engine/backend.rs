//! Prover backends, split into the phases of the GPU interlock:
//!
//! 1. `prestage` under `mem_mtx`: upload a batch's inputs into VRAM the
//!    worker has reserved (stream-ordered work only), after
//!    `keep_resident` made what the device keeps for it (a resident SRS);
//! 2. `compute` under `compute_mtx`: the kernels (NTTs, MSMs); or, for an
//!    urgent call whose whole working set is reserved, `compute_beside`
//!    without it, beside the call that holds it;
//! 3. `epilogue` with no lock: fetch results and assemble the proofs.
//!
//! When the reservation does not fit, the worker takes the fallback:
//! `compute_fallback` under `compute_mtx` (synchronize, trim, allocate
//! within what is free, upload, compute). Both paths give identical proofs.
//!
//! Each backend names the state its phases hand on
//! ([`ProverBackend::Staged`], [`ProverBackend::Computed`]). The engine
//! holds a backend as a [`Backend`]: one call runs the phases through a
//! device's interlock, generic over the backend, so that state keeps its
//! type from phase to phase.
//!
//! [`CpuBackend`] runs everything on the CPU (no device memory, so its
//! VRAM is unlimited unless `gpus.vram_limit` caps it);
//! `gpu_backend::GpuBackend` (feature `cuda`) proves on CUDA devices.
//! [`default_backend`] picks the GPU where there is one.

use super::interlock::{DeviceLocks, VramBudget};
use super::memory::{MemoryBudget, Purpose, Reservation};
use super::plan_report::DevicePlan;
pub use super::prover_error::ProverError;
use super::srs_handle::SrsHandle;
use crate::cs::ProvingAssignment;
use crate::groth16::{prove_synthesized_until, Proof, StopCheck};
use crate::pce::{Pce, PceSizes};
use crate::srs::{KeyShape, PointSlice};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

/// A device the backend proves on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub ordinal: u32,
    pub name: String,
    pub vram_bytes: u64,
}

/// What one prover call works on: circuits of the same shape, one SRS.
pub struct ProveInput<'a> {
    /// The SRS: its shape, and its host points (read again where they were
    /// released: [`SrsHandle::host_points`]). Shared, so a backend can tie
    /// device copies of it to it.
    pub srs: &'a Arc<SrsHandle>,
    pub assignments: &'a [ProvingAssignment],
    /// The device's VRAM budget, for memory a backend keeps beyond one call
    /// (a resident SRS); per-call memory is reserved by the worker.
    pub vram: &'a Arc<VramBudget>,
    /// The circuits' PCE where they were synthesized through one: what a,
    /// b, c of assignments that carry their witness only are computed from.
    pub pce: Option<&'a Arc<Pce>>,
    /// The engine's host memory budget, where a backend that computes a, b,
    /// c on the host for assignments that carry their witness only (for
    /// which the engine reserved the witness alone) reserves them first
    /// (None: not counted).
    pub host_memory: Option<&'a Arc<MemoryBudget>>,
    /// Whether the engine's reservation for these assignments counts the
    /// working copies of a, b, c that an H term on the host makes. Not
    /// where it expected the H term on the device
    /// ([`ProverBackend::h_term_on_device`]) or reserved the witness only:
    /// a backend that computes an H term on the host for them reserves
    /// the copies first ([`ProveInput::reserve_host_h_term`]).
    pub h_copies_counted: bool,
    /// Asks the backend to stop at its next boundary (each circuit, phase
    /// or MSM) once every job these assignments serve has ended.
    pub stop: StopCheck<'a>,
}

impl ProveInput<'_> {
    /// The assignments with a, b, c, computed on the CPU for those that
    /// carry their witness only (a backend that has no device to compute
    /// them on).
    pub fn with_abc(&self) -> Result<Cow<'_, [ProvingAssignment]>, ProverError> {
        if !self.assignments.iter().any(ProvingAssignment::abc_deferred) {
            return Ok(Cow::Borrowed(self.assignments));
        }
        let pce = self.pce.ok_or_else(|| ProverError::Internal("witness-only partitions without their PCE".into()))?;
        let complete = |pa: &ProvingAssignment| {
            let mut pa = pa.clone();
            if pa.abc_deferred() {
                (pa.a, pa.b, pa.c) = pce.abc(&pa);
            }
            pa
        };
        Ok(Cow::Owned(self.assignments.iter().map(complete).collect()))
    }

    /// Whether the assignments carry their witness only.
    pub fn witness_only(&self) -> bool {
        self.assignments.first().is_some_and(ProvingAssignment::abc_deferred)
    }

    /// The working copies of a, b, c (zero-padded to the domain) that an H
    /// term on the host makes for `circuits` of these assignments at once,
    /// reserved in the engine's budget where its reservation does not
    /// count them (`h_copies_counted`). While the budget has no room: an
    /// out-of-host-memory error, and the prover worker proves the unit
    /// again once the budget frees some.
    pub fn reserve_host_h_term(&self, circuits: usize) -> Result<Option<Reservation>, ProverError> {
        let Some(budget) = self.host_memory.filter(|_| !self.h_copies_counted) else { return Ok(None) };
        let domain = self.assignments.first().map_or(0, |a| a.num_constraints().next_power_of_two()) as u64;
        let bytes = 3 * domain * std::mem::size_of::<blstrs::Scalar>() as u64 * circuits as u64;
        budget.try_reserve(bytes, Purpose::Partition).map(Some).ok_or_else(|| {
            ProverError::OutOfHostMemory(format!(
                "the H term on the host needs {} for its working copies of a, b, c beyond the engine's budget",
                crate::config::format_size(bytes)
            ))
        })
    }
}

pub trait ProverBackend: Send + Sync {
    /// What `prestage` leaves for `compute` (inputs uploaded, buffers held).
    type Staged: Send;
    /// What `compute` and `compute_fallback` leave for `epilogue`.
    type Computed: Send;
    fn name(&self) -> &str;
    fn devices(&self) -> Vec<DeviceInfo>;
    /// Makes the device copies that this input's calls keep beyond
    /// themselves (a GPU's resident SRS, where its plan puts it), under
    /// `mem_mtx` before the worker sizes and reserves the call's working
    /// set: that size depends on where the points are.
    fn keep_resident(&self, _device: u32, _input: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }
    /// Device bytes that pre-staging and proving this input needs.
    fn vram_needed(&self, device: u32, input: &ProveInput<'_>) -> u64;
    fn prestage(&self, device: u32, input: &ProveInput<'_>) -> Result<Self::Staged, ProverError>;
    fn compute(&self, device: u32, staged: Self::Staged, input: &ProveInput<'_>) -> Result<Self::Computed, ProverError>;
    /// [`ProverBackend::compute`] of an urgent call beside another call
    /// computing on the same device (the urgent beside path of
    /// [`super::prover_worker`]): within the worker's reservation of the
    /// whole working set alone, borrowing nothing, and with no state of the
    /// device that assumes one compute at a time (the default: `compute`).
    fn compute_beside(&self, device: u32, staged: Self::Staged, input: &ProveInput<'_>) -> Result<Self::Computed, ProverError> {
        self.compute(device, staged, input)
    }
    /// Runs `work`, all of an urgent call's phases on this thread, ahead of
    /// other work on the device where the backend can ask for that (the
    /// GPU: the call's streams at the device's greatest priority, so beside
    /// a long partition its kernels wait for blocks, not for kernels).
    /// Default: `work` as it is.
    fn as_urgent<R>(&self, work: impl FnOnce() -> R) -> R {
        work()
    }
    /// `vram_granted` (maybe less than needed) is what the fallback may use.
    /// The worker also takes this path, once, where `prestage` or `compute`
    /// ran out of device memory.
    fn compute_fallback(&self, device: u32, vram_granted: u64, input: &ProveInput<'_>) -> Result<Self::Computed, ProverError>;
    /// Where `input`'s working set does not fit beside the call computing
    /// on `device`: the part of it that may be staged ahead under
    /// `mem_mtx` while that call computes, or None (the default: the
    /// fallback stages everything within the compute lock).
    fn stage_ahead(&self, _device: u32, _input: &ProveInput<'_>) -> Option<StageAhead> {
        None
    }
    /// Stages the part that [`ProverBackend::stage_ahead`] names, within a
    /// reservation of its bytes (the default: everything, as `prestage`).
    fn prestage_ahead(&self, device: u32, input: &ProveInput<'_>) -> Result<Self::Staged, ProverError> {
        self.prestage(device, input)
    }
    /// [`ProverBackend::compute_fallback`] of an input whose part was
    /// staged ahead; `vram_granted` counts that part's reservation (the
    /// default: `compute`).
    fn compute_fallback_staged(
        &self,
        device: u32,
        _vram_granted: u64,
        staged: Self::Staged,
        input: &ProveInput<'_>,
    ) -> Result<Self::Computed, ProverError> {
        self.compute(device, staged, input)
    }
    fn epilogue(&self, device: u32, computed: Self::Computed) -> Result<Vec<Proof>, ProverError>;
    /// Whether partitions of `pce`'s circuit, proved with `srs` on
    /// `devices`, get their a, b, c computed on the device (the matrices
    /// resident there, made so now where the VRAM budget has room beside a
    /// working set): the engine then synthesizes them witness-only, and
    /// holds the lease until they are proved. The CPU backend computes
    /// them itself.
    fn abc_on_device(&self, _pce: &Arc<Pce>, _srs: &SrsHandle, _devices: &[Arc<DeviceLocks>]) -> Option<MatricesLease> {
        None
    }
    /// Whether partitions of `srs`'s circuits, proved on `devices`, get
    /// their H term on the device (its buffers fit each device's VRAM
    /// budget beside an MSM): the engine then reserves a partition whose a,
    /// b, c come from the CPU SpMV at what it holds, without the working
    /// copies of a, b, c that an H term on the host makes (3 Fr per point
    /// of the domain: 12 GiB at 2^27, as much again as a, b, c). A call
    /// that computes it on the host after all reserves them itself
    /// ([`ProveInput::reserve_host_h_term`]). The CPU backend's H term is
    /// on the host.
    fn h_term_on_device(&self, _srs: &SrsHandle, _devices: &[Arc<DeviceLocks>]) -> bool {
        false
    }
    /// Whether `device` keeps a copy of `srs`'s points of its own (a GPU's
    /// resident SRS): its proofs need no host points. Where every device
    /// in service does, the engine releases the host points
    /// ([`super::srs_handle::release_where_every_device_holds`]).
    fn holds_points(&self, _device: u32, _srs: &SrsHandle) -> bool {
        false
    }
    /// Where every device in service would keep an SRS of `shape`
    /// resident from its first partition (the rule `keep_resident`
    /// follows, applied before the points are read, by the rule of
    /// [`super::srs_handle::every_device_would_hold`]) and has the room
    /// for it now: a load that fills each device's copy slice by slice as
    /// the file is read (the host never holding the points whole). None
    /// (the default): the SRS loads into host memory, and `keep_resident`
    /// makes the copies from there.
    ///
    /// `pce` is what the engine knows of the circuit's PCE as the SRS
    /// loads: a backend that keeps matrices on its devices
    /// (`abc_on_device`) decides with them counted, as `keep_resident`
    /// does once the first partition has placed them, so that the load
    /// never changes what ends up resident; where their size is not known
    /// yet ([`PceAtLoad::Unknown`]), it returns None.
    fn resident_load(&self, _shape: &dyn KeyShape, _pce: &PceAtLoad, _devices: &[Arc<DeviceLocks>]) -> Option<Box<dyn ResidentLoad + '_>> {
        None
    }
    /// What each device in service plans for partitions of `srs`'s
    /// circuit (its PCE `pce`; `witness_only`: synthesized so), for the
    /// plan report ([`super::plan_report`]): by the rules its calls
    /// follow, changing nothing. The CPU backend's: no VRAM.
    fn device_plans(
        &self,
        _srs: &SrsHandle,
        _pce: Option<&Arc<Pce>>,
        _witness_only: bool,
        devices: &[Arc<DeviceLocks>],
    ) -> Vec<DevicePlan> {
        devices.iter().filter(|d| d.in_service()).map(|d| DevicePlan::on_cpu(d.ordinal)).collect()
    }
}

/// What the engine knows, as a circuit's SRS loads, of the PCE its
/// partitions will carry: the matrices a backend may keep on its devices
/// beside the SRS ([`ProverBackend::abc_on_device`], asked by the first
/// partition, before `keep_resident`).
#[derive(Clone, Debug)]
pub enum PceAtLoad {
    /// None: the engine keeps no PCEs, or none for this circuit (too
    /// large for one, say).
    None,
    /// Held in memory already (its matrices may be on a device too).
    Held(Arc<Pce>),
    /// Of these sizes: its `.pce` file's header, the file to be loaded by
    /// the circuit's first partition.
    File(PceSizes),
    /// Its size is known once the first partition has recorded it (no
    /// file, or one that cannot be loaded), or another partition is
    /// recording it now.
    Unknown,
}

impl PceAtLoad {
    /// Its sizes, where known.
    pub fn sizes(&self) -> Option<PceSizes> {
        match self {
            PceAtLoad::Held(pce) => Some(pce.sizes()),
            PceAtLoad::File(sizes) => Some(*sizes),
            PceAtLoad::None | PceAtLoad::Unknown => None,
        }
    }
}

/// The devices' copies of an SRS being loaded straight to them
/// ([`ProverBackend::resident_load`]), filled as its file is read. Dropped
/// unfinished (the file turned out bad), the copies are freed with their
/// VRAM.
pub trait ResidentLoad {
    /// Copies `slice` of checked points into every device's copy, at its
    /// place (returns when the copies are done).
    fn fill(&mut self, slice: &PointSlice<'_>) -> Result<(), ProverError>;
    /// Every point is in: each device keeps its copy of `srs` from now on,
    /// as it keeps one `keep_resident` made.
    fn finish(self: Box<Self>, srs: &Arc<SrsHandle>);
}

/// What a call whose working set does not fit beside the call computing
/// on its device stages ahead ([`ProverBackend::stage_ahead`]): a GPU's
/// witness for the SpMV, whose upload then leaves the compute lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageAhead {
    /// Device bytes of that part.
    pub bytes: u64,
    /// The least grant (with that part) a call computes in at full speed:
    /// a call on the fallback leaves the next one room for its part only
    /// where its own grant stays at least this.
    pub min_grant: u64,
}

/// A hold on a circuit's matrices where a backend keeps them (device
/// copies): while partitions synthesized witness-only on the strength of
/// them wait to be proved, the backend must not evict them (to make room
/// for an SRS, say), or those partitions would find no matrices and need
/// host memory for a, b, c they were never counted for.
pub struct MatricesLease {
    _held: Vec<Arc<dyn std::any::Any + Send + Sync>>,
}

impl MatricesLease {
    /// Holds each of `copies` (a backend evicts none that is held).
    pub fn holding(copies: Vec<Arc<dyn std::any::Any + Send + Sync>>) -> Self {
        MatricesLease { _held: copies }
    }
}

/// How one unit went through the interlock, for the per-proof log line.
#[derive(Clone, Copy, Debug)]
pub struct InterlockTrace {
    /// "prestaged", "urgent_beside" (an urgent call pre-staged and
    /// computed beside the compute lock's holder), "fallback",
    /// "staged_ahead" (the fallback, with the part
    /// [`ProverBackend::stage_ahead`] names staged under `mem_mtx`), or
    /// "prestaged_then_fallback" / "urgent_beside_then_fallback" (out of
    /// device memory in `prestage` or `compute`).
    pub path: &'static str,
    pub mem_wait: Duration,
    pub prestage: Duration,
    pub compute_wait: Duration,
    pub kernel: Duration,
    pub epilogue: Duration,
}

/// A prover backend as the engine holds it: every [`ProverBackend`] is one.
pub trait Backend: Send + Sync {
    fn name(&self) -> &str;
    fn devices(&self) -> Vec<DeviceInfo>;
    /// `input` proved on `dev` through its interlock (pre-staged, or the
    /// fallback; `urgent`: ahead of normal work for the locks, and beside
    /// the compute lock's holder where its working set fits an urgent
    /// reservation and the urgent reserve);
    /// `gpu_event(event, path)` records the timeline's gpu_start and
    /// gpu_end.
    fn prove_interlocked(
        &self,
        dev: &DeviceLocks,
        input: &ProveInput<'_>,
        urgent: bool,
        gpu_event: &dyn Fn(&'static str, Option<&'static str>),
    ) -> Result<(Vec<Proof>, InterlockTrace), ProverError>;
    /// [`ProverBackend::abc_on_device`].
    fn abc_on_device(&self, pce: &Arc<Pce>, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> Option<MatricesLease>;
    /// [`ProverBackend::h_term_on_device`].
    fn h_term_on_device(&self, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> bool;
    /// [`ProverBackend::holds_points`].
    fn holds_points(&self, device: u32, srs: &SrsHandle) -> bool;
    /// [`ProverBackend::resident_load`].
    fn resident_load(&self, shape: &dyn KeyShape, pce: &PceAtLoad, devices: &[Arc<DeviceLocks>]) -> Option<Box<dyn ResidentLoad + '_>>;
    /// [`ProverBackend::device_plans`].
    fn device_plans(&self, srs: &SrsHandle, pce: Option<&Arc<Pce>>, witness_only: bool, devices: &[Arc<DeviceLocks>]) -> Vec<DevicePlan>;
}

impl<B: ProverBackend> Backend for B {
    fn name(&self) -> &str {
        ProverBackend::name(self)
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        ProverBackend::devices(self)
    }

    fn prove_interlocked(
        &self,
        dev: &DeviceLocks,
        input: &ProveInput<'_>,
        urgent: bool,
        gpu_event: &dyn Fn(&'static str, Option<&'static str>),
    ) -> Result<(Vec<Proof>, InterlockTrace), ProverError> {
        let through = || super::prover_worker::through_interlock(self, dev, input, urgent, gpu_event);
        if urgent {
            self.as_urgent(through)
        } else {
            through()
        }
    }

    fn abc_on_device(&self, pce: &Arc<Pce>, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> Option<MatricesLease> {
        ProverBackend::abc_on_device(self, pce, srs, devices)
    }

    fn h_term_on_device(&self, srs: &SrsHandle, devices: &[Arc<DeviceLocks>]) -> bool {
        ProverBackend::h_term_on_device(self, srs, devices)
    }

    fn holds_points(&self, device: u32, srs: &SrsHandle) -> bool {
        ProverBackend::holds_points(self, device, srs)
    }

    fn resident_load(&self, shape: &dyn KeyShape, pce: &PceAtLoad, devices: &[Arc<DeviceLocks>]) -> Option<Box<dyn ResidentLoad + '_>> {
        ProverBackend::resident_load(self, shape, pce, devices)
    }

    fn device_plans(&self, srs: &SrsHandle, pce: Option<&Arc<Pce>>, witness_only: bool, devices: &[Arc<DeviceLocks>]) -> Vec<DevicePlan> {
        ProverBackend::device_plans(self, srs, pce, witness_only, devices)
    }
}

/// Groth16 on the CPU ([`crate::groth16::prove_synthesized`]).
#[derive(Clone, Debug, Default)]
pub struct CpuBackend;

/// What a GPU would hold for a batch: a, b, c and the H coefficients per
/// circuit (the SRS is streamed, not counted).
pub fn abc_device_bytes(input: &ProveInput<'_>) -> u64 {
    let per = input.assignments.first().map_or(0, |a| 4 * a.num_constraints().next_power_of_two() as u64 * 32);
    per * input.assignments.len() as u64
}

impl ProverBackend for CpuBackend {
    type Staged = ();
    type Computed = Vec<Proof>;

    fn name(&self) -> &str {
        "cpu"
    }

    fn devices(&self) -> Vec<DeviceInfo> {
        vec![DeviceInfo { ordinal: 0, name: "cpu".into(), vram_bytes: u64::MAX }]
    }

    fn vram_needed(&self, _device: u32, input: &ProveInput<'_>) -> u64 {
        abc_device_bytes(input)
    }

    /// Nothing to upload: the assignments already sit in host memory.
    fn prestage(&self, _device: u32, _input: &ProveInput<'_>) -> Result<(), ProverError> {
        Ok(())
    }

    fn compute(&self, _device: u32, _staged: (), input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        // Every circuit's H term at once (a GPU's work that came to the
        // CPU may not have counted them).
        let _h_copies = input.reserve_host_h_term(input.assignments.len())?;
        let assignments = input.with_abc()?;
        let points = input.srs.host_points()?;
        Ok(prove_synthesized_until(&points, &assignments, input.stop)?)
    }

    fn compute_fallback(&self, device: u32, _vram_granted: u64, input: &ProveInput<'_>) -> Result<Vec<Proof>, ProverError> {
        self.compute(device, (), input)
    }

    fn epilogue(&self, _device: u32, computed: Vec<Proof>) -> Result<Vec<Proof>, ProverError> {
        Ok(computed)
    }
}

/// The GPU backend over every CUDA device when the build has CUDA and a
/// device is present; the CPU backend otherwise (the reason is logged).
/// `CUZK_BACKEND=cpu` forces the CPU.
pub fn default_backend() -> Arc<dyn Backend> {
    if std::env::var("CUZK_BACKEND").is_ok_and(|v| v == "cpu") {
        log::info!("backend: CPU (CUZK_BACKEND=cpu)");
        return Arc::new(CpuBackend);
    }
    #[cfg(feature = "cuda")]
    match super::gpu_backend::GpuBackend::new() {
        Ok(b) => return Arc::new(b),
        Err(e) => log::info!("backend: CPU ({e})"),
    }
    #[cfg(not(feature = "cuda"))]
    log::info!("backend: CPU (built without the cuda feature)");
    Arc::new(CpuBackend)
}
