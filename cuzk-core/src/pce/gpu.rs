//! A PCE's A, B, C resident on a GPU (cuzk-sys's [`SpmvMatrices`]), or
//! left in host memory and streamed through the device ([`StreamedPce`]):
//! a, b, c computed on the device from an uploaded witness, bit for bit
//! what [`super::spmv::evaluate`] gives on the host.

use super::{Pce, PceSizes};
use crate::arith::blst_layout::{repr, repr_mut};
use blstrs::Scalar as Fr;
use cuzk_sys::{Csr, DeviceBuffer, FrRepr, SpmvMatrices, Stream};
use ff::Field;
use std::sync::{Arc, Weak};

/// One circuit's matrices on one device.
pub struct GpuPce {
    matrices: SpmvMatrices,
    num_inputs: usize,
}

fn csr(m: &super::SparseMatrix) -> Csr<'_> {
    Csr { row_ptr: &m.row_ptr, cols: &m.cols, coeff_idx: &m.coeff_idx }
}

impl GpuPce {
    /// Device bytes [`GpuPce::upload`] takes for `pce`.
    pub fn device_bytes(pce: &Pce) -> cuzk_sys::Result<u64> {
        Self::device_bytes_of(&pce.sizes())
    }

    /// [`GpuPce::device_bytes`] of a PCE of `sizes` (its file's header),
    /// before it is read.
    pub fn device_bytes_of(sizes: &PceSizes) -> cuzk_sys::Result<u64> {
        SpmvMatrices::device_bytes(sizes.num_constraints, sizes.nnz, sizes.num_coeffs)
    }

    /// Uploads `pce`'s matrices and coefficients to `device` (returns when
    /// the copies are done).
    pub fn upload(pce: &Pce, device: i32) -> cuzk_sys::Result<Self> {
        let matrices = SpmvMatrices::new(device, [csr(&pce.a), csr(&pce.b), csr(&pce.c)], repr(&pce.coeffs), pce.shape.num_vars())?;
        Ok(GpuPce { matrices, num_inputs: pce.shape.num_inputs })
    }

    pub fn device(&self) -> i32 {
        self.matrices.device()
    }

    /// Device bytes held.
    pub fn bytes(&self) -> u64 {
        self.matrices.bytes()
    }

    pub fn num_constraints(&self) -> usize {
        self.matrices.rows()
    }

    /// Elements of z: inputs ‖ aux.
    pub fn num_vars(&self) -> usize {
        self.matrices.num_vars()
    }

    /// Copies a witness of this circuit's shape into `z` (inputs, then aux)
    /// and waits for the copies.
    pub fn upload_witness(&self, stream: &Stream, inputs: &[Fr], aux: &[Fr], z: &mut DeviceBuffer<FrRepr>) -> cuzk_sys::Result<()> {
        upload_witness((self.num_inputs, self.num_vars() - self.num_inputs), stream, inputs, aux, z)
    }

    /// Enqueues a, b, c for the witness in `z` into the first `len`
    /// elements of `a`, `b`, `c` (zero past the constraints).
    pub fn evaluate(
        &self,
        stream: &Stream,
        z: &DeviceBuffer<FrRepr>,
        [a, b, c]: [&mut DeviceBuffer<FrRepr>; 3],
        len: usize,
    ) -> cuzk_sys::Result<()> {
        self.matrices.evaluate(stream, z, a, b, c, len)
    }

    /// a, b, c on the host for a witness (allocates its own device buffers;
    /// for tests and benchmarks).
    pub fn evaluate_to_host(&self, inputs: &[Fr], aux: &[Fr]) -> cuzk_sys::Result<(Vec<Fr>, Vec<Fr>, Vec<Fr>)> {
        let dev = self.device();
        let stream = Stream::new(dev)?;
        let mut z = DeviceBuffer::new(dev, self.num_vars().max(1))?;
        self.upload_witness(&stream, inputs, aux, &mut z)?;
        let n = self.num_constraints();
        let (mut a, mut b, mut c) =
            (DeviceBuffer::new(dev, n.max(1))?, DeviceBuffer::new(dev, n.max(1))?, DeviceBuffer::new(dev, n.max(1))?);
        self.evaluate(&stream, &z, [&mut a, &mut b, &mut c], n)?;
        let to_host = |d: &DeviceBuffer<FrRepr>| -> cuzk_sys::Result<Vec<Fr>> {
            let mut host = vec![Fr::ZERO; n];
            d.copy_to_host(&stream, 0, repr_mut(&mut host))?;
            Ok(host)
        };
        Ok((to_host(&a)?, to_host(&b)?, to_host(&c)?))
    }
}

/// Copies a witness of `shape` (inputs, aux) into `z`, inputs first.
fn upload_witness(
    (num_inputs, num_aux): (usize, usize),
    stream: &Stream,
    inputs: &[Fr],
    aux: &[Fr],
    z: &mut DeviceBuffer<FrRepr>,
) -> cuzk_sys::Result<()> {
    if (inputs.len(), aux.len()) != (num_inputs, num_aux) {
        return Err(cuzk_sys::Error::invalid(format!(
            "witness of {} inputs and {} aux for matrices over {num_inputs} inputs and {num_aux} aux",
            inputs.len(),
            aux.len()
        )));
    }
    z.copy_from_host(stream, 0, repr(inputs))?;
    z.copy_from_host(stream, inputs.len(), repr(aux))
}

/// Which matrix of a PCE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    A,
    B,
    C,
}

/// One circuit's matrices left in host memory, for a card without room
/// for them beside a proof's working set: evaluated one at a time through
/// a device staging area (cuzk-sys's [`cuzk_sys::evaluate_streamed`]),
/// so that a, b, c still come from the device and a partition needs only
/// two H buffers (c computed into b's once a·b is formed). Their indices
/// are checked once, here; the coefficient table lives on the device.
/// It does not keep the PCE alive: each call is given the PCE it was made
/// from, which must still be that one.
pub struct StreamedPce {
    pce: Weak<Pce>,
    shape: (usize, usize),
    coeffs: DeviceBuffer<FrRepr>,
    staging_min: u64,
    staging_whole: u64,
}

impl StreamedPce {
    /// Checks `pce`'s indices (on the calling thread: a 32 GiB PoRep PCE
    /// has ~700M entries) and uploads its coefficient table to `device`.
    pub fn new(pce: &Arc<Pce>, device: i32) -> cuzk_sys::Result<Self> {
        let (rows, vars, n) = (pce.num_constraints(), pce.shape.num_vars() as u64, pce.coeffs.len());
        let mut staging_min = 0;
        for (m, name) in [(&pce.a, "A"), (&pce.b, "B"), (&pce.c, "C")] {
            csr(m).check(name, rows, vars, n)?;
            staging_min = staging_min.max(cuzk_sys::streamed_staging_min(csr(m))?);
        }
        let stream = Stream::new(device)?;
        let mut coeffs = DeviceBuffer::new(device, n)?;
        coeffs.copy_from_host(&stream, 0, repr(&pce.coeffs))?;
        stream.synchronize()?;
        let shape = (pce.shape.num_inputs, pce.shape.num_aux);
        // Each half holds a chunk's row pointers, columns and coefficient
        // indices, each part aligned to 256 bytes.
        let whole = [&pce.a, &pce.b, &pce.c].iter().map(|m| 4 * (rows as u64 + 1) + 8 * m.nnz() as u64 + 768).max().unwrap_or(0);
        Ok(StreamedPce { pce: Arc::downgrade(pce), shape, coeffs, staging_min, staging_whole: 2 * whole })
    }

    /// Whether this was made from `pce` (alive, so the same object).
    pub fn made_from(&self, pce: &Pce) -> bool {
        self.pce.strong_count() > 0 && std::ptr::eq(self.pce.as_ptr(), pce)
    }

    /// Inputs and aux of the circuit's witness.
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }

    /// Copies a witness of this circuit's shape into `z` (inputs, then aux).
    pub fn upload_witness(&self, stream: &Stream, inputs: &[Fr], aux: &[Fr], z: &mut DeviceBuffer<FrRepr>) -> cuzk_sys::Result<()> {
        upload_witness(self.shape, stream, inputs, aux, z)
    }

    /// Elements of z: inputs ‖ aux.
    pub fn num_vars(&self) -> usize {
        self.shape.0 + self.shape.1
    }

    pub fn device(&self) -> i32 {
        self.coeffs.device()
    }

    /// The least staging [`StreamedPce::evaluate`] takes: two chunks of
    /// the longest row. More makes fewer, larger copies.
    pub fn staging_min(&self) -> u64 {
        self.staging_min
    }

    /// Staging that holds the largest matrix whole in each half: more is
    /// never used.
    pub fn staging_whole(&self) -> u64 {
        self.staging_whole
    }

    /// Enqueues `out` = `m`·z of `pce` (the PCE this was made from) for the
    /// witness in `z` (inputs, then aux) on `stream`, zero past the
    /// constraints up to `len`, through `staging`.
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate(
        &self,
        pce: &Pce,
        m: Matrix,
        stream: &Stream,
        z: &DeviceBuffer<FrRepr>,
        out: &mut DeviceBuffer<FrRepr>,
        len: usize,
        staging: &mut DeviceBuffer<u8>,
    ) -> cuzk_sys::Result<()> {
        if !self.made_from(pce) {
            return Err(cuzk_sys::Error::invalid(format!("matrices of {:?}, not those these were checked from", pce.circuit_id)));
        }
        if z.len() < self.num_vars() {
            return Err(cuzk_sys::Error::invalid(format!("z has {} elements, the matrices {} columns", z.len(), self.num_vars())));
        }
        let matrix = match m {
            Matrix::A => &pce.a,
            Matrix::B => &pce.b,
            Matrix::C => &pce.c,
        };
        // Checked in `new` against this PCE's variables and this table; the
        // PCE is that one (alive), shared immutably (`Arc`) since.
        unsafe { cuzk_sys::evaluate_streamed(stream, csr(matrix), &self.coeffs, z, out, len, staging) }
    }
}

/// Page-locks `pce`'s matrices (row pointers, columns, coefficient
/// indices), once, so that [`StreamedPce::evaluate`] copies them by DMA
/// at PCIe speed instead of through the pinned ring's CPU copies; undone
/// when `pce` is dropped. True where this call pinned them; false where
/// they were already.
///
/// # Safety
/// The matrices must not be modified (reallocated) while `pce` lives: the
/// engine's PCEs are shared immutably (`Arc`).
pub unsafe fn pin_matrices(pce: &Pce) -> cuzk_sys::Result<bool> {
    if pce.pinned.is_set() {
        return Ok(false);
    }
    let mut held = Vec::new();
    for m in [&pce.a, &pce.b, &pce.c] {
        for v in [&m.row_ptr, &m.cols, &m.coeff_idx] {
            held.push(cuzk_sys::HostRegistration::new(v.as_slice())?);
        }
    }
    // Two threads pinning at once: the loser's registrations are undone.
    Ok(pce.pinned.set(Box::new(held)))
}
