//! Where a circuit's H term inputs come from ([`HInputs`]): a, b, c
//! uploaded from the host (computed there first for an assignment that
//! carries its witness only), or computed on the device by the SpMV from
//! the witness, uploaded once into a z that the set of H buffers keeps
//! for the circuit's query MSMs; or by the SpMV over matrices streamed
//! from host memory, the H term formed in two buffers before the third is
//! allocated ([`GpuProver::stage_h_streamed`]).

use super::{h_log_n, GpuProveError, GpuProver, HInputs};
use crate::arith::blst_layout::repr;
use crate::cs::ProvingAssignment;
use crate::groth16::prover::ProveError;
use crate::pce::gpu::{GpuPce, Matrix, StreamedPce};
use crate::pce::Pce;
use blstrs::Scalar as Fr;
use cuzk_sys::{DeviceBuffer, FrRepr, HTermBuffers, Stream};
use std::borrow::Cow;

/// Device staging for matrices streamed from host memory: two halves of
/// 128 MiB (or two chunks of the longest row, where that is more; a whole
/// matrix in each, where that is less).
const STREAMED_STAGING_BYTES: u64 = 256 << 20;

/// One circuit's a, b, c in the H term's buffers (the pre-staged part).
pub struct StagedH {
    pub(super) bufs: HTermBuffers,
    pub(super) log_n: u32,
    /// Where the SpMV computed them: that circuit's witness z = inputs ‖
    /// aux, kept for its query MSMs.
    pub(super) z: Option<DeviceBuffer<FrRepr>>,
    /// h is computed already, in `bufs.a` (by [`GpuProver::stage_h_streamed`]).
    pub(super) h_ready: bool,
}

impl StagedH {
    /// How its a, b, c came there.
    pub fn inputs(&self) -> HInputs {
        if self.z.is_some() {
            HInputs::SpmvOnDevice
        } else {
            HInputs::Uploaded
        }
    }

    pub(super) fn new(device: i32, log_n: u32, z_len: Option<usize>) -> Result<Self, GpuProveError> {
        let bufs = HTermBuffers::new(device, log_n)?;
        let z = z_len.map(|n| DeviceBuffer::new(device, n.max(1))).transpose()?;
        Ok(StagedH { bufs, log_n, z, h_ready: false })
    }
}

/// A circuit's witness z = inputs ‖ aux on the device, uploaded ahead of
/// its H buffers ([`GpuProver::stage_witness`]): where the card has room
/// for the z of the next circuit beside the one computing, but not for its
/// H buffers, the upload leaves the compute lock and only the SpMV stays.
pub struct StagedWitness {
    z: DeviceBuffer<FrRepr>,
    num_vars: usize,
}

impl StagedWitness {
    /// Device bytes it holds.
    pub fn bytes(&self) -> u64 {
        (self.z.len() * std::mem::size_of::<FrRepr>()) as u64
    }
}

/// A circuit's recorded R1CS (its PCE) for a proving call: on the host,
/// and resident on the device where it is, or ready to stream to it
/// (`streamed`, over the same PCE as `host`).
#[derive(Clone, Copy)]
pub struct Matrices<'a> {
    pub host: &'a Pce,
    pub device: Option<&'a GpuPce>,
    pub streamed: Option<&'a StreamedPce>,
}

/// Where one call's a, b, c come from: the SpMV on the device (the plan's
/// [`HInputs::SpmvOnDevice`]), else the assignments, or the host SpMV for
/// those that carry their witness only.
#[derive(Clone, Copy, Default)]
pub(super) struct Abc<'a> {
    pub(super) spmv: Option<&'a GpuPce>,
    /// The plan's [`HInputs::SpmvStreamed`]: matrices streamed to this device.
    pub(super) streamed: Option<&'a StreamedPce>,
    host: Option<&'a Pce>,
}

/// a, b, c on the host.
type HostAbc<'p> = [Cow<'p, [Fr]>; 3];

impl Abc<'_> {
    /// `pa`'s a, b, c on the host: its own, or computed from the PCE.
    pub(super) fn on_host<'p>(&self, pa: &'p ProvingAssignment) -> Result<HostAbc<'p>, GpuProveError> {
        if !pa.abc_deferred() {
            return Ok([Cow::Borrowed(&pa.a[..]), Cow::Borrowed(&pa.b[..]), Cow::Borrowed(&pa.c[..])]);
        }
        let pce = self.host.ok_or(ProveError::AbcDeferred { index: 0 })?;
        let (a, b, c) = pce.abc(pa);
        Ok([Cow::Owned(a), Cow::Owned(b), Cow::Owned(c)])
    }
}

impl GpuProver {
    /// Allocates H buffers and puts `pa`'s a, b, c into them: computed by
    /// the SpMV where `pce`'s matrices are resident on this device (its
    /// witness uploaded into a z kept with them), else uploaded (computed
    /// on the host first where `pa` carries its witness only).
    pub fn stage_h(&self, pa: &ProvingAssignment, pce: Option<Matrices<'_>>) -> Result<StagedH, GpuProveError> {
        let abc = self.abc(pce, pa, true, false)?;
        let mut st = StagedH::new(self.device, h_log_n(pa.num_constraints())?, abc.spmv.map(GpuPce::num_vars))?;
        self.restage(pa, &mut st, abc)?;
        Ok(st)
    }

    /// Where a call's a, b, c come from: the SpMV when `spmv` (the plan's
    /// choice) and `pce`'s matrices are on this device for circuits of
    /// `shape`'s shape, else the streamed SpMV when `streamed` and they
    /// stream to this device; `pce` must fit the shape where given, and be
    /// given for an assignment that carries its witness only.
    pub(super) fn abc<'a>(
        &self,
        pce: Option<Matrices<'a>>,
        shape: &ProvingAssignment,
        spmv: bool,
        streamed: bool,
    ) -> Result<Abc<'a>, GpuProveError> {
        let Some(m) = pce else {
            return match shape.abc_deferred() {
                true => Err(ProveError::AbcDeferred { index: 0 }.into()),
                false => Ok(Abc::default()),
            };
        };
        let (ni, na, n) = (shape.input_assignment.len(), shape.aux_assignment.len(), shape.num_constraints());
        let rec = &m.host.shape;
        if (rec.num_inputs, rec.num_aux, m.host.num_constraints()) != (ni, na, n) {
            return Err(GpuProveError::Plan(format!(
                "the PCE of {:?} has {} inputs, {} aux, {} constraints; the circuits {ni}, {na}, {n}",
                m.host.circuit_id,
                rec.num_inputs,
                rec.num_aux,
                m.host.num_constraints()
            )));
        }
        let on_device = m.device.filter(|g| spmv && g.device() == self.device && g.num_vars() == ni + na && g.num_constraints() == n);
        let streamed = m.streamed.filter(|s| streamed && on_device.is_none() && s.device() == self.device && s.made_from(m.host));
        Ok(Abc { spmv: on_device, streamed, host: Some(m.host) })
    }

    /// Allocates H buffers and a z and computes a, b, c into them on the
    /// device from a witness (inputs, aux) and the circuit's resident
    /// matrices: what [`GpuProver::stage_h`] gives, without a, b, c
    /// computed on the host or crossing PCIe.
    pub fn stage_h_spmv(&self, pce: &GpuPce, inputs: &[Fr], aux: &[Fr]) -> Result<StagedH, GpuProveError> {
        self.check_on_device(pce)?;
        let mut st = StagedH::new(self.device, h_log_n(pce.num_constraints())?, Some(pce.num_vars()))?;
        self.spmv_stage(pce, inputs, aux, &mut st)?;
        Ok(st)
    }

    /// `pa`'s witness uploaded into a z of its own for the SpMV over `pce`'s
    /// matrices (resident on this device): the first half of
    /// [`GpuProver::stage_h`], which [`GpuProver::stage_h_from_witness`]
    /// completes.
    pub fn stage_witness(&self, pce: &GpuPce, pa: &ProvingAssignment) -> Result<StagedWitness, GpuProveError> {
        self.check_on_device(pce)?;
        let num_vars = pce.num_vars();
        let mut z = DeviceBuffer::new(self.device, num_vars.max(1))?;
        let t = std::time::Instant::now();
        pce.upload_witness(&Stream::new(self.device)?, &pa.input_assignment, &pa.aux_assignment, &mut z)?;
        log::debug!("gpu witness staged ahead gpu={} witness_upload_ms={}", self.device, t.elapsed().as_millis());
        Ok(StagedWitness { z, num_vars })
    }

    /// H buffers allocated and a, b, c computed into them by the SpMV over
    /// a witness staged ahead ([`GpuProver::stage_witness`]) and `pce`'s
    /// matrices: what [`GpuProver::stage_h`] gives, its upload done before.
    pub fn stage_h_from_witness(&self, pce: &GpuPce, witness: StagedWitness) -> Result<StagedH, GpuProveError> {
        self.check_on_device(pce)?;
        if witness.num_vars != pce.num_vars() {
            return Err(GpuProveError::Plan(format!(
                "a witness of {} variables staged for matrices of {}",
                witness.num_vars,
                pce.num_vars()
            )));
        }
        let t = std::time::Instant::now();
        let bufs = HTermBuffers::new(self.device, h_log_n(pce.num_constraints())?)?;
        let alloc = t.elapsed();
        let mut st = StagedH { log_n: bufs.log_n, bufs, z: Some(witness.z), h_ready: false };
        self.spmv_from_z(pce, &mut st)?;
        log::debug!(
            "gpu staged by the SpMV from a witness staged ahead gpu={} h_alloc_ms={} spmv_ms={}",
            self.device,
            alloc.as_millis(),
            (t.elapsed() - alloc).as_millis()
        );
        Ok(st)
    }

    fn check_on_device(&self, pce: &GpuPce) -> Result<(), GpuProveError> {
        match pce.device() == self.device {
            true => Ok(()),
            false => Err(GpuProveError::Plan(format!("PCE on device {}, prover on {}", pce.device(), self.device))),
        }
    }

    /// The H buffers in `slot` holding `pa`'s a, b, c: as they are when
    /// `ready` (already staged), else staged into them as `abc` says,
    /// allocated the first time (with h computed already where the
    /// matrices stream: [`GpuProver::stage_h_streamed`]).
    pub(super) fn staged_h<'s>(
        &self,
        slot: &'s mut Option<StagedH>,
        pa: &ProvingAssignment,
        ready: bool,
        abc: Abc<'_>,
    ) -> Result<&'s mut StagedH, GpuProveError> {
        if let (None, Some(streamed), Some(host), false) = (slot.as_ref(), abc.streamed, abc.host, ready) {
            return Ok(slot.insert(self.stage_h_streamed(pa, host, streamed)?));
        }
        let st = match *slot {
            Some(ref mut st) => st,
            None => {
                let t = std::time::Instant::now();
                let st = StagedH::new(self.device, h_log_n(pa.num_constraints())?, abc.spmv.map(GpuPce::num_vars))?;
                log::debug!("gpu H buffers allocated gpu={} ms={}", self.device, t.elapsed().as_millis());
                slot.insert(st)
            }
        };
        if !ready {
            self.restage(pa, st, abc)?;
        }
        Ok(st)
    }

    /// `pa`'s a, b, c into `st`: by the SpMV (its witness into `st.z`), or
    /// uploaded.
    pub(super) fn restage(&self, pa: &ProvingAssignment, st: &mut StagedH, abc: Abc<'_>) -> Result<(), GpuProveError> {
        st.h_ready = false;
        let Some(pce) = abc.spmv else {
            st.z = None; // no longer this circuit's witness
            let [a, b, c] = abc.on_host(pa)?;
            let stream = Stream::new(self.device)?;
            self.ntt.h_stage(&stream, repr(&a), repr(&b), repr(&c), st.log_n, &mut st.bufs)?;
            return Ok(());
        };
        self.spmv_stage(pce, &pa.input_assignment, &pa.aux_assignment, st)
    }

    /// `pa`'s H term from its witness and its circuit's matrices streamed
    /// from host memory (the plan's [`HInputs::SpmvStreamed`]): z and two
    /// H buffers allocated, a and b computed and transformed and their
    /// product formed, then c computed into b's buffer and h into a's; z
    /// and the staging area freed before the third buffer is allocated, so
    /// the peak is two H buffers, z and the staging
    /// ([`GpuProver::streamed_bytes`]). The H buffers come back with h
    /// computed and no z: the rest of the call runs as for uploaded a, b, c.
    pub fn stage_h_streamed(&self, pa: &ProvingAssignment, host: &Pce, pce: &StreamedPce) -> Result<StagedH, GpuProveError> {
        let log_n = h_log_n(pa.num_constraints())?;
        let n = 1usize << log_n;
        let stream = Stream::new(self.device)?;
        let mut z = DeviceBuffer::new(self.device, pce.num_vars().max(1))?;
        pce.upload_witness(&stream, &pa.input_assignment, &pa.aux_assignment, &mut z)?;
        let (mut a, mut b) = (DeviceBuffer::new(self.device, n)?, DeviceBuffer::new(self.device, n)?);
        let mut staging = DeviceBuffer::<u8>::new(self.device, Self::streamed_staging_bytes(pce) as usize)?;
        pce.evaluate(host, Matrix::A, &stream, &z, &mut a, n, &mut staging)?;
        pce.evaluate(host, Matrix::B, &stream, &z, &mut b, n, &mut staging)?;
        self.ntt.h_compute_ab(&stream, log_n, &mut a, &mut b)?;
        pce.evaluate(host, Matrix::C, &stream, &z, &mut b, n, &mut staging)?;
        self.ntt.h_compute_c(&stream, log_n, &mut a, &mut b)?;
        stream.synchronize()?;
        drop((z, staging)); // before the third buffer: the peak stays two buffers, z and the staging
        let c = DeviceBuffer::new(self.device, HTermBuffers::c_len(log_n))?;
        Ok(StagedH { bufs: HTermBuffers { log_n, a, b, c }, log_n, z: None, h_ready: true })
    }

    /// Device staging the prover streams `pce`'s matrices through.
    pub fn streamed_staging_bytes(pce: &StreamedPce) -> u64 {
        STREAMED_STAGING_BYTES.min(pce.staging_whole()).max(pce.staging_min())
    }

    /// Device bytes [`GpuProver::stage_h_streamed`] takes at its peak for
    /// circuits of `num_constraints` over `pce`: two H buffers, z and the
    /// staging area.
    pub fn streamed_bytes(num_constraints: usize, pce: &StreamedPce) -> Result<u64, GpuProveError> {
        let n = 1u64 << h_log_n(num_constraints)?;
        let fr = std::mem::size_of::<FrRepr>() as u64;
        Ok(2 * n * fr + pce.num_vars().max(1) as u64 * fr + Self::streamed_staging_bytes(pce))
    }

    /// A witness (inputs, aux) into `st.z` (allocated the first time), then
    /// a, b, c by the SpMV over it.
    fn spmv_stage(&self, pce: &GpuPce, inputs: &[Fr], aux: &[Fr], st: &mut StagedH) -> Result<(), GpuProveError> {
        let z = match st.z {
            Some(ref mut z) => z,
            None => st.z.insert(DeviceBuffer::new(self.device, pce.num_vars().max(1))?),
        };
        let t = std::time::Instant::now();
        pce.upload_witness(&Stream::new(self.device)?, inputs, aux, z)?;
        let upload = t.elapsed();
        self.spmv_from_z(pce, st)?;
        log::debug!(
            "gpu staged by the SpMV gpu={} witness_upload_ms={} spmv_ms={}",
            self.device,
            upload.as_millis(),
            (t.elapsed() - upload).as_millis()
        );
        Ok(())
    }

    /// a, b, c into `st`'s buffers by the SpMV over the witness in `st.z`
    /// (zero-padded to the domain); returns when they are computed.
    pub(super) fn spmv_from_z(&self, pce: &GpuPce, st: &mut StagedH) -> Result<(), GpuProveError> {
        let z = st.z.as_ref().ok_or_else(|| GpuProveError::Plan("SpMV without a witness on the device".into()))?;
        let stream = Stream::new(self.device)?;
        let HTermBuffers { a, b, c, .. } = &mut st.bufs;
        pce.evaluate(&stream, z, [a, b, c], 1 << st.log_n)?;
        stream.synchronize()?;
        Ok(())
    }

    /// One of a circuit's a, b, c uploaded into `buf` and zero-padded to
    /// the 2^log_n domain (what `restage_h` does for all three); returns
    /// when it is in. (log_n comes from the constraint count, so a, b
    /// and c fit the domain; the buffer checks both ranges.)
    pub(super) fn stage_input(&self, host: &[Fr], log_n: u32, buf: &mut DeviceBuffer<FrRepr>) -> Result<(), GpuProveError> {
        let stream = Stream::new(self.device)?;
        buf.copy_from_host(&stream, 0, repr(host))?;
        buf.zero_async(&stream, host.len(), (1usize << log_n).saturating_sub(host.len()))?;
        stream.synchronize()?;
        Ok(())
    }
}
