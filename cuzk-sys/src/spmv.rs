//! Sparse matrix-vector products on the device (native/spmv/): a
//! pre-compiled constraint system's A, B, C resident in device memory, and
//! a = A·z, b = B·z, c = C·z for a device-resident witness z; or, for a
//! card without room for them, one matrix at a time from host memory
//! through a device staging area ([`evaluate_streamed`]).

use std::ffi::c_void;
use std::ptr;

use crate::device::{DeviceBuffer, Stream};
use crate::error::{call, Error, Result};
use crate::{ffi, FrRepr};

/// One matrix in compressed sparse rows, borrowed from the host: row r's
/// entries are `cols[row_ptr[r]..row_ptr[r + 1]]` with coefficients
/// `coeffs[coeff_idx[k]]`.
#[derive(Clone, Copy, Debug)]
pub struct Csr<'a> {
    pub row_ptr: &'a [u32],
    pub cols: &'a [u32],
    pub coeff_idx: &'a [u32],
}

impl Csr<'_> {
    fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    /// Every index in bounds: the device reads what these say unchecked.
    /// `name` names the matrix in the error.
    pub fn check(&self, name: &str, rows: usize, num_vars: u64, num_coeffs: usize) -> Result<()> {
        let bad = |m: String| Err(Error::invalid(format!("matrix {name}: {m}")));
        if self.row_ptr.is_empty() || self.rows() != rows {
            return bad(format!("{} rows, A has {rows}", self.rows()));
        }
        if self.cols.len() != self.coeff_idx.len() {
            return bad(format!("{} columns but {} coefficient indices", self.cols.len(), self.coeff_idx.len()));
        }
        if self.row_ptr[0] != 0 || *self.row_ptr.last().unwrap() as usize != self.cols.len() {
            return bad(format!("row pointers do not span its {} entries", self.cols.len()));
        }
        if let Some(r) = self.row_ptr.windows(2).position(|w| w[0] > w[1]) {
            return bad(format!("row pointers decrease at row {r}"));
        }
        if let Some(&c) = self.cols.iter().max().filter(|&&c| c as u64 >= num_vars) {
            return bad(format!("column {c} beyond the {num_vars} variables"));
        }
        if let Some(&i) = self.coeff_idx.iter().max().filter(|&&i| i as usize >= num_coeffs) {
            return bad(format!("coefficient {i} beyond the table of {num_coeffs}"));
        }
        Ok(())
    }

    fn raw(&self) -> ffi::cuzk_spmv_matrix {
        ffi::cuzk_spmv_matrix {
            row_ptr: self.row_ptr.as_ptr(),
            cols: self.cols.as_ptr(),
            coeff_idx: self.coeff_idx.as_ptr(),
            nnz: self.cols.len() as u64,
        }
    }
}

/// A, B, C and their coefficient table in device memory (one allocation).
/// Immutable once uploaded: any number of streams may evaluate it at once.
pub struct SpmvMatrices {
    raw: *mut ffi::cuzk_spmv,
    device: i32,
    rows: usize,
    num_vars: usize,
    bytes: u64,
}

unsafe impl Send for SpmvMatrices {}
unsafe impl Sync for SpmvMatrices {}

impl SpmvMatrices {
    /// Device bytes [`SpmvMatrices::new`] takes for matrices of `rows`
    /// rows, `nnz` entries each (A, B, C) and `num_coeffs` coefficients.
    pub fn device_bytes(rows: usize, nnz: [usize; 3], num_coeffs: usize) -> Result<u64> {
        let nnz = nnz.map(|n| n as u64);
        let mut bytes = 0;
        call(|e| unsafe { ffi::cuzk_spmv_device_bytes(rows as u64, nnz.as_ptr(), num_coeffs as u64, &mut bytes, e) })?;
        Ok(bytes)
    }

    /// Checks every index of `abc` (A, B, C over `num_vars` columns) and
    /// uploads them with `coeffs` (whose first two must be 1 and −1, in
    /// blst's Montgomery form) to `device`. Returns when the copies are done.
    pub fn new(device: i32, abc: [Csr<'_>; 3], coeffs: &[FrRepr], num_vars: usize) -> Result<Self> {
        let rows = abc[0].rows();
        for (m, name) in abc.iter().zip(["A", "B", "C"]) {
            m.check(name, rows, num_vars as u64, coeffs.len())?;
        }
        if rows >= 1 << 32 || num_vars >= 1 << 32 {
            return Err(Error::invalid(format!("{rows} rows, {num_vars} variables: at most 2^32 - 1 each")));
        }
        let raw_abc = abc.map(|m| m.raw());
        let mut raw = ptr::null_mut();
        call(|e| unsafe {
            ffi::cuzk_spmv_create(
                device,
                raw_abc.as_ptr(),
                rows as u64,
                num_vars as u64,
                coeffs.as_ptr() as *const c_void,
                coeffs.len() as u64,
                &mut raw,
                e,
            )
        })?;
        let mut h = SpmvMatrices { raw, device, rows, num_vars, bytes: 0 };
        call(|e| unsafe { ffi::cuzk_spmv_bytes(h.raw, &mut h.bytes, e) })?;
        Ok(h)
    }

    pub fn device(&self) -> i32 {
        self.device
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn num_vars(&self) -> usize {
        self.num_vars
    }

    /// Device bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Enqueues a = A·z, b = B·z, c = C·z on `stream` into the first
    /// `len` elements of `a`, `b`, `c` (rows past the matrices' are zero:
    /// the H term's padding). `z` holds the witness, inputs then aux, in its
    /// first [`SpmvMatrices::num_vars`] elements.
    pub fn evaluate(
        &self,
        stream: &Stream,
        z: &DeviceBuffer<FrRepr>,
        a: &mut DeviceBuffer<FrRepr>,
        b: &mut DeviceBuffer<FrRepr>,
        c: &mut DeviceBuffer<FrRepr>,
        len: usize,
    ) -> Result<()> {
        if z.len() < self.num_vars {
            return Err(Error::invalid(format!("z has {} elements, the matrices {} columns", z.len(), self.num_vars)));
        }
        if len < self.rows || a.len() < len || b.len() < len || c.len() < len {
            return Err(Error::invalid(format!(
                "outputs of {len} ({}, {}, {} allocated) for {} rows",
                a.len(),
                b.len(),
                c.len(),
                self.rows
            )));
        }
        if [z.device(), a.device(), b.device(), c.device(), stream.device()].iter().any(|&d| d != self.device) {
            return Err(Error::invalid("z, outputs or stream on another device than the matrices"));
        }
        call(|e| unsafe {
            ffi::cuzk_spmv_evaluate(
                self.raw,
                stream.raw(),
                z.as_ptr(),
                self.num_vars as u64,
                a.as_mut_ptr(),
                b.as_mut_ptr(),
                c.as_mut_ptr(),
                len as u64,
                e,
            )
        })
    }
}

/// Device bytes of staging [`evaluate_streamed`] needs at least for `m`
/// (two chunks of its longest row; reads every row pointer).
pub fn streamed_staging_min(m: Csr<'_>) -> Result<u64> {
    let mut bytes = 0;
    call(|e| unsafe { ffi::cuzk_spmv_streamed_staging_min(&m.raw(), m.rows() as u64, &mut bytes, e) })?;
    Ok(bytes)
}

/// Enqueues `out` = M·z on `stream` for M's rows and zero past them up to
/// `len`, M left in host memory: copied in chunks of rows through the two
/// halves of `staging`, each chunk's copy overlapping the previous chunk's
/// products (page-locked matrices move at PCIe speed; pageable ones are
/// copied through pinned buffers before this returns). `coeffs` is the
/// coefficient table on the device (1 and −1 first), `z` the witness
/// (inputs, then aux). The same bytes as [`SpmvMatrices::evaluate`] gives.
///
/// # Safety
/// `m` must have passed [`Csr::check`] against `z`'s variables and
/// `coeffs`' length (the device reads its indices unchecked), and its
/// memory must stay unchanged until `stream` has passed this work.
pub unsafe fn evaluate_streamed(
    stream: &Stream,
    m: Csr<'_>,
    coeffs: &DeviceBuffer<FrRepr>,
    z: &DeviceBuffer<FrRepr>,
    out: &mut DeviceBuffer<FrRepr>,
    len: usize,
    staging: &mut DeviceBuffer<u8>,
) -> Result<()> {
    let rows = m.rows();
    if len < rows || out.len() < len {
        return Err(Error::invalid(format!("an output of {len} ({} allocated) for {rows} rows", out.len())));
    }
    if [coeffs.device(), z.device(), out.device(), staging.device()].iter().any(|&d| d != stream.device()) {
        return Err(Error::invalid("coefficients, z, output or staging on another device than the stream"));
    }
    call(|e| {
        ffi::cuzk_spmv_evaluate_streamed(
            stream.raw(),
            &m.raw(),
            rows as u64,
            coeffs.as_ptr(),
            z.as_ptr(),
            out.as_mut_ptr(),
            len as u64,
            staging.as_mut_ptr(),
            staging.len() as u64,
            e,
        )
    })
}

impl Drop for SpmvMatrices {
    fn drop(&mut self) {
        let _ = call(|e| unsafe { ffi::cuzk_spmv_destroy(self.raw, e) });
    }
}
