//! The `.pce` file: a [`Pce`] stored next to the params.
//!
//! Layout (little-endian):
//! - magic `CUZKPCE\0`, format version (u32), circuit id (u32 length + UTF-8);
//! - inputs, aux, constraints, coefficients, nnz(A), nnz(B), nnz(C) (u64
//!   each), the input-order hash (u64);
//! - the coefficients (32-byte canonical scalars);
//! - A, B, C, each as row pointers (rows + 1 u32), columns, coefficient
//!   indices (nnz u32 each);
//! - BLAKE2b-256 of everything before it.
//!
//! Reading refuses, with a named [`PceError`], a file that is not a PCE,
//! of another version, of the wrong size (truncated), with a wrong
//! checksum (altered), or whose indices are out of range.

use super::{Pce, PceError, Shape, SparseMatrix};
use blstrs::Scalar as Fr;
use ff::PrimeField;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CUZKPCE\0";
/// Bumped whenever the layout or the meaning of the recorded matrices
/// changes: older files are then refused as stale and rebuilt.
pub const VERSION: u32 = 1;
const CHECKSUM_LEN: usize = 32;

fn hasher() -> blake2b_simd::State {
    blake2b_simd::Params::new().hash_length(CHECKSUM_LEN).to_state()
}

/// Writes `pce` to `path` (through a temporary file renamed into place, so
/// a reader never sees half a file).
pub fn write(pce: &Pce, path: &Path) -> Result<(), PceError> {
    let io = |source| PceError::Io { path: path.display().to_string(), source };
    let tmp = path.with_extension(format!("pce.tmp{}", std::process::id()));
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut w = HashingWriter { inner: std::io::BufWriter::with_capacity(1 << 20, file), hash: hasher() };
    write_body(pce, &mut w).map_err(io)?;
    let sum = w.hash.finalize();
    let mut inner = w.inner;
    inner.write_all(sum.as_bytes()).map_err(io)?;
    inner.into_inner().map_err(|e| io(e.into_error()))?.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// The file's bytes (for tests and small circuits).
pub fn to_bytes(pce: &Pce) -> Vec<u8> {
    let mut w = HashingWriter { inner: Vec::new(), hash: hasher() };
    write_body(pce, &mut w).expect("writing to memory");
    let sum = w.hash.finalize();
    let mut out = w.inner;
    out.extend_from_slice(sum.as_bytes());
    out
}

struct HashingWriter<W> {
    inner: W,
    hash: blake2b_simd::State,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_body(pce: &Pce, w: &mut impl Write) -> std::io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&(pce.circuit_id.len() as u32).to_le_bytes())?;
    w.write_all(pce.circuit_id.as_bytes())?;
    let s = &pce.shape;
    for v in [
        s.num_inputs as u64,
        s.num_aux as u64,
        pce.num_constraints() as u64,
        pce.coeffs.len() as u64,
        pce.a.nnz() as u64,
        pce.b.nnz() as u64,
        pce.c.nnz() as u64,
        s.input_order,
    ] {
        w.write_all(&v.to_le_bytes())?;
    }
    for c in &pce.coeffs {
        w.write_all(c.to_repr().as_ref())?;
    }
    let mut buf = Vec::with_capacity(1 << 16);
    for m in [&pce.a, &pce.b, &pce.c] {
        for part in [&m.row_ptr, &m.cols, &m.coeff_idx] {
            for chunk in part.chunks(1 << 14) {
                buf.clear();
                chunk.iter().for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
                w.write_all(&buf)?;
            }
        }
    }
    Ok(())
}

/// Reads and checks a `.pce` file.
pub fn read(path: &Path) -> Result<Pce, PceError> {
    let bytes = std::fs::read(path).map_err(|source| PceError::Io { path: path.display().to_string(), source })?;
    from_bytes(&bytes)
}

/// The header of a PCE file: what `cuzk pce info` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub circuit_id: String,
    pub shape: Shape,
    pub num_constraints: u64,
    pub num_coeffs: u64,
    pub nnz: [u64; 3],
}

impl Header {
    /// The file size this header describes.
    pub fn file_len(&self, header_len: usize) -> Option<u64> {
        let rows = self.num_constraints.checked_add(1)?;
        let mut len = header_len as u64 + CHECKSUM_LEN as u64;
        len = len.checked_add(self.num_coeffs.checked_mul(32)?)?;
        for nnz in self.nnz {
            len = len.checked_add(rows.checked_add(nnz.checked_mul(2)?)?.checked_mul(4)?)?;
        }
        Some(len)
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PceError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(PceError::Size { expected: (self.at + n) as u64, actual: self.bytes.len() as u64 })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, PceError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, PceError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn u32s(&mut self, n: u64) -> Result<Vec<u32>, PceError> {
        let bytes = self.take(n as usize * 4)?;
        Ok(bytes.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect())
    }
}

/// Parses the header; returns it with its length in bytes.
pub fn read_header(bytes: &[u8]) -> Result<(Header, usize), PceError> {
    let mut c = Cursor { bytes, at: 0 };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(PceError::NotPce);
    }
    c.take(MAGIC.len())?;
    let version = c.u32()?;
    if version != VERSION {
        return Err(PceError::Version { found: version, supported: VERSION });
    }
    let id_len = c.u32()? as usize;
    let circuit_id = String::from_utf8(c.take(id_len)?.to_vec())
        .map_err(|_| PceError::Malformed("the circuit id is not UTF-8".into()))?;
    let mut fields = [0u64; 8];
    for f in fields.iter_mut() {
        *f = c.u64()?;
    }
    let [ni, na, rows, ncoeffs, nnz_a, nnz_b, nnz_c, order] = fields;
    let to_usize = |v: u64, what: &str| usize::try_from(v).map_err(|_| PceError::Malformed(format!("{what} {v} too large")));
    let shape = Shape { num_inputs: to_usize(ni, "input count")?, num_aux: to_usize(na, "aux count")?, input_order: order };
    let header = Header { version, circuit_id, shape, num_constraints: rows, num_coeffs: ncoeffs, nnz: [nnz_a, nnz_b, nnz_c] };
    Ok((header, c.at))
}

/// Parses and checks a PCE file's bytes.
pub fn from_bytes(bytes: &[u8]) -> Result<Pce, PceError> {
    let (h, header_len) = read_header(bytes)?;
    let expected = h.file_len(header_len).ok_or_else(|| PceError::Malformed("sizes in the header overflow".into()))?;
    if expected != bytes.len() as u64 {
        return Err(PceError::Size { expected, actual: bytes.len() as u64 });
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    if hasher().update(body).finalize().as_bytes() != sum {
        return Err(PceError::Checksum);
    }
    let mut c = Cursor { bytes: body, at: header_len };
    let mut coeffs = Vec::with_capacity(h.num_coeffs as usize);
    for i in 0..h.num_coeffs {
        let repr: [u8; 32] = c.take(32)?.try_into().unwrap();
        let v = Option::<Fr>::from(Fr::from_repr(repr))
            .ok_or_else(|| PceError::Malformed(format!("coefficient {i} is not a canonical scalar")))?;
        coeffs.push(v);
    }
    let mut matrix = |nnz: u64| -> Result<SparseMatrix, PceError> {
        Ok(SparseMatrix { row_ptr: c.u32s(h.num_constraints + 1)?, cols: c.u32s(nnz)?, coeff_idx: c.u32s(nnz)? })
    };
    let (a, b, cm) = (matrix(h.nnz[0])?, matrix(h.nnz[1])?, matrix(h.nnz[2])?);
    Pce::from_parts(h.circuit_id, h.shape, coeffs, a, b, cm)
}
