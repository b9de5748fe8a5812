//! The `.pce` file: a [`Pce`] stored next to the params.
//!
//! Layout (little-endian):
//! - magic `CUZKPCE\0`, format version (u32), circuit id (u32 length + UTF-8);
//! - inputs, aux, constraints, coefficients, nnz(A), nnz(B), nnz(C) (u64
//!   each), the input-order hash (u64);
//! - the coefficients (32-byte canonical scalars);
//! - A, B, C, each as row pointers (rows + 1 u32), columns, coefficient
//!   indices (nnz u32 each);
//! - the checksum: BLAKE2b-256 of the list of the BLAKE2b-256 of every
//!   piece of the file before it, where a piece is up to [`PIECE`] bytes of
//!   one section (the header with the coefficients; each of the nine
//!   arrays). Pieces are read and hashed on all cores: a production PCE is
//!   several GiB, which one core hashes at ~1 GB/s.
//!
//! Reading fills each array in place from the file (no second copy of the
//! file in memory) and refuses, with a named [`PceError`], a file that is
//! not a PCE, of another version, of the wrong size (truncated), with a
//! wrong checksum (altered), or whose indices are out of range.

use super::{Pce, PceError, PceSizes, Shape, SparseMatrix};
use crate::par;
use blstrs::Scalar as Fr;
use ff::PrimeField;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CUZKPCE\0";
/// Bumped whenever the layout, the checksum or the meaning of the recorded
/// matrices changes: older files are then refused as stale and rebuilt.
pub const VERSION: u32 = 2;
const CHECKSUM_LEN: usize = 32;
/// Bytes of a piece of a section, hashed on its own.
pub const PIECE: usize = 64 << 20;
/// Longest circuit id a header may name (a sanity bound on a length read
/// from the file).
const MAX_ID_LEN: usize = 4096;

type Hash = [u8; CHECKSUM_LEN];

fn hash(bytes: &[u8]) -> Hash {
    let h = blake2b_simd::Params::new().hash_length(CHECKSUM_LEN).hash(bytes);
    h.as_bytes().try_into().expect("32-byte hash")
}

/// The checksum of pieces hashed in file order.
fn checksum(piece_hashes: &[Hash]) -> Hash {
    hash(piece_hashes.as_flattened())
}

/// Writes `pce` to `path` (through a temporary file renamed into place, so
/// a reader never sees half a file).
pub fn write(pce: &Pce, path: &Path) -> Result<(), PceError> {
    let io = |error| PceError::Io { path: path.display().to_string(), error };
    let sections = sections(pce);
    let bytes = sections.iter().map(|s| s.len() as u64).sum::<u64>() + std::mem::size_of::<Hash>() as u64;
    crate::disk_room::ensure_room(path, "the .pce file", bytes).map_err(io)?;
    let sum = checksum(&piece_hashes(&sections));
    let tmp = path.with_extension(format!("pce.tmp{}", std::process::id()));
    let written = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        for s in &sections {
            w.write_all(s)?;
        }
        w.write_all(&sum)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        // A partial file would keep the room the failed write ran out of.
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)
}

/// The file's bytes (for tests and small circuits).
pub fn to_bytes(pce: &Pce) -> Vec<u8> {
    let sections = sections(pce);
    let mut out = sections.concat();
    out.extend_from_slice(&checksum(&piece_hashes(&sections)));
    out
}

/// The file's sections in order: the header with the coefficients, then
/// the nine arrays' little-endian bytes.
fn sections(pce: &Pce) -> Vec<std::borrow::Cow<'_, [u8]>> {
    let mut head = Vec::new();
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&(pce.circuit_id.len() as u32).to_le_bytes());
    head.extend_from_slice(pce.circuit_id.as_bytes());
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
        head.extend_from_slice(&v.to_le_bytes());
    }
    for c in &pce.coeffs {
        head.extend_from_slice(c.to_repr().as_ref());
    }
    let mut out = vec![head.into()];
    for m in [&pce.a, &pce.b, &pce.c] {
        for part in [&m.row_ptr, &m.cols, &m.coeff_idx] {
            out.push(le_bytes(part));
        }
    }
    out
}

/// `v`'s little-endian bytes: its own memory on a little-endian host.
fn le_bytes(v: &[u32]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: any u32 is four initialized bytes; u8 needs no alignment.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }.into()
    } else {
        v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>().into()
    }
}

/// The hashes of every piece of `sections`, in order, on all cores.
fn piece_hashes(sections: &[std::borrow::Cow<'_, [u8]>]) -> Vec<Hash> {
    let pieces: Vec<&[u8]> = sections.iter().flat_map(|s| s.chunks(PIECE)).collect();
    par::map_chunks(&pieces, 1, |_, ps| ps.iter().map(|p| hash(p)).collect::<Vec<_>>()).concat()
}

/// Where a PCE is read from: a file, or bytes in memory.
trait Source: Sync {
    fn len(&self) -> u64;
    /// Fills `buf` from `offset`; the caller has checked the range.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl Source for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let bytes = usize::try_from(offset).ok().and_then(|at| self.get(at..at.checked_add(buf.len())?));
        buf.copy_from_slice(bytes.ok_or(std::io::ErrorKind::UnexpectedEof)?);
        Ok(())
    }
}

struct FileSource {
    #[cfg(unix)]
    file: std::fs::File,
    #[cfg(not(unix))]
    file: std::sync::Mutex<std::fs::File>,
    len: u64,
}

impl Source for FileSource {
    fn len(&self) -> u64 {
        self.len
    }
    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }
    #[cfg(not(unix))]
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        use std::io::{Read, Seek};
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.seek(std::io::SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// Reads and checks a `.pce` file.
pub fn read(path: &Path) -> Result<Pce, PceError> {
    let io = |error| PceError::Io { path: path.display().to_string(), error };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    #[cfg(not(unix))]
    let file = std::sync::Mutex::new(file);
    parse(&FileSource { file, len }).map_err(|e| match e {
        Parse::Pce(e) => e,
        Parse::Io(error) => io(error),
    })
}

/// The sizes of the PCE in `path`, from its header alone, checked as far
/// as the header goes without reading the rest: a PCE file of this
/// version, for `circuit_id`, of the length its header describes. What
/// the header cannot tell (the checksum, the indices) is checked where
/// the file is read ([`read`]).
pub fn read_sizes(path: &Path, circuit_id: &str) -> Result<PceSizes, PceError> {
    let io = |error| PceError::Io { path: path.display().to_string(), error };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    #[cfg(not(unix))]
    let file = std::sync::Mutex::new(file);
    let src = FileSource { file, len };
    let parse = |e| match e {
        Parse::Pce(e) => e,
        Parse::Io(error) => io(error),
    };
    let (h, head) = read_header(&src).map_err(parse)?;
    if h.circuit_id != circuit_id {
        return Err(PceError::CircuitId { expected: circuit_id.into(), found: h.circuit_id });
    }
    let expected = h.file_len(head.len()).ok_or_else(|| PceError::Malformed("sizes in the header overflow".into()))?;
    if expected != len {
        return Err(PceError::Size { expected, actual: len });
    }
    // Each fits a usize where the file's length does (checked above).
    let size = |v: u64| usize::try_from(v).map_err(|_| PceError::Malformed(format!("a size of {v} in the header")));
    let [a, b, c] = h.nnz;
    Ok(PceSizes {
        num_constraints: size(h.num_constraints)?,
        nnz: [size(a)?, size(b)?, size(c)?],
        num_coeffs: size(h.num_coeffs)?,
        num_vars: h.shape.num_vars(),
    })
}

/// Parses and checks a PCE file's bytes.
pub fn from_bytes(bytes: &[u8]) -> Result<Pce, PceError> {
    parse(bytes).map_err(|e| match e {
        Parse::Pce(e) => e,
        // Every read is within the length checked first: not expected.
        Parse::Io(e) => PceError::Malformed(format!("reading the bytes: {e}")),
    })
}

enum Parse {
    Pce(PceError),
    Io(std::io::Error),
}

impl From<PceError> for Parse {
    fn from(e: PceError) -> Self {
        Parse::Pce(e)
    }
}

/// The header of a PCE file: what the rest of the file holds.
struct Header {
    circuit_id: String,
    shape: Shape,
    num_constraints: u64,
    num_coeffs: u64,
    nnz: [u64; 3],
}

impl Header {
    /// The file size this header describes.
    fn file_len(&self, header_len: usize) -> Option<u64> {
        let rows = self.num_constraints.checked_add(1)?;
        let mut len = header_len as u64 + CHECKSUM_LEN as u64;
        len = len.checked_add(self.num_coeffs.checked_mul(32)?)?;
        for nnz in self.nnz {
            len = len.checked_add(rows.checked_add(nnz.checked_mul(2)?)?.checked_mul(4)?)?;
        }
        Some(len)
    }

    /// Elements of the nine arrays, in file order.
    fn array_lens(&self) -> [u64; 9] {
        let rows = self.num_constraints + 1;
        let [a, b, c] = self.nnz;
        [rows, a, a, rows, b, b, rows, c, c]
    }
}

/// Reads `n` bytes at `at` of `src`, or says the file is too short.
fn take(src: &(impl Source + ?Sized), at: &mut u64, n: usize) -> Result<Vec<u8>, Parse> {
    let end = at.checked_add(n as u64).filter(|&e| e <= src.len());
    let end = end.ok_or(PceError::Size { expected: *at + n as u64, actual: src.len() })?;
    let mut buf = vec![0; n];
    src.read_at(&mut buf, *at).map_err(Parse::Io)?;
    *at = end;
    Ok(buf)
}

/// Parses the header; returns it with its bytes.
fn read_header(src: &(impl Source + ?Sized)) -> Result<(Header, Vec<u8>), Parse> {
    if src.len() < MAGIC.len() as u64 {
        return Err(PceError::NotPce.into());
    }
    let mut at = 0;
    let mut head = take(src, &mut at, MAGIC.len() + 8)?;
    if &head[..MAGIC.len()] != MAGIC {
        return Err(PceError::NotPce.into());
    }
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let version = u32_at(&head, 8);
    if version != VERSION {
        return Err(PceError::Version { found: version, supported: VERSION }.into());
    }
    let id_len = u32_at(&head, 12) as usize;
    if id_len > MAX_ID_LEN {
        return Err(PceError::Malformed(format!("a circuit id of {id_len} bytes")).into());
    }
    let rest = take(src, &mut at, id_len + 64)?;
    let circuit_id = String::from_utf8(rest[..id_len].to_vec()).map_err(|_| PceError::Malformed("the circuit id is not UTF-8".into()))?;
    let field = |i: usize| u64::from_le_bytes(rest[id_len + 8 * i..id_len + 8 * i + 8].try_into().unwrap());
    let [ni, na, rows, ncoeffs, nnz_a, nnz_b, nnz_c, order] = std::array::from_fn(field);
    let to_usize = |v: u64, what: &str| usize::try_from(v).map_err(|_| PceError::Malformed(format!("{what} {v} too large")));
    let shape = Shape { num_inputs: to_usize(ni, "input count")?, num_aux: to_usize(na, "aux count")?, input_order: order };
    head.extend_from_slice(&rest);
    let header = Header { circuit_id, shape, num_constraints: rows, num_coeffs: ncoeffs, nnz: [nnz_a, nnz_b, nnz_c] };
    Ok((header, head))
}

/// One piece to read: its place in the file, where it goes, its hash.
struct Piece<'a> {
    offset: u64,
    bytes: &'a mut [u8],
    hash: Hash,
}

fn parse(src: &(impl Source + ?Sized)) -> Result<Pce, Parse> {
    let (h, mut head) = read_header(src)?;
    let expected = h.file_len(head.len()).ok_or_else(|| PceError::Malformed("sizes in the header overflow".into()))?;
    if expected != src.len() {
        return Err(PceError::Size { expected, actual: src.len() }.into());
    }
    let header_len = head.len();
    let mut at = header_len as u64;
    head.extend(take(src, &mut at, h.num_coeffs as usize * 32)?);
    // The arrays, filled in place piece by piece on all cores.
    let mut arrays: Vec<Vec<u32>> = h.array_lens().iter().map(|&n| vec![0u32; n as usize]).collect();
    let mut pieces = Vec::new();
    for a in arrays.iter_mut() {
        // SAFETY: u32s are four initialized bytes each; any bytes are a u32.
        let bytes = unsafe { std::slice::from_raw_parts_mut(a.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(a.as_slice())) };
        for bytes in bytes.chunks_mut(PIECE) {
            let offset = at;
            at += bytes.len() as u64;
            pieces.push(Piece { offset, bytes, hash: [0; CHECKSUM_LEN] });
        }
    }
    let failed = std::sync::Mutex::new(None);
    par::for_each_chunk_mut(&mut pieces, 1, |_, ps| {
        for p in ps {
            match src.read_at(p.bytes, p.offset) {
                Ok(()) => p.hash = hash(p.bytes),
                Err(e) => *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e),
            }
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(Parse::Io(e));
    }
    let mut hashes: Vec<Hash> = head.chunks(PIECE).map(hash).collect();
    hashes.extend(pieces.iter().map(|p| p.hash));
    let sum = take(src, &mut at, CHECKSUM_LEN)?;
    if checksum(&hashes)[..] != sum[..] {
        return Err(PceError::Checksum.into());
    }
    if cfg!(target_endian = "big") {
        arrays.iter_mut().flatten().for_each(|x| *x = u32::from_le(*x));
    }
    let coeffs = head[header_len..]
        .chunks_exact(32)
        .enumerate()
        .map(|(i, repr)| {
            Option::<Fr>::from(Fr::from_repr(repr.try_into().unwrap()))
                .ok_or_else(|| PceError::Malformed(format!("coefficient {i} is not a canonical scalar")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut arrays = arrays.into_iter();
    let mut matrix = || SparseMatrix { row_ptr: arrays.next().unwrap(), cols: arrays.next().unwrap(), coeff_idx: arrays.next().unwrap() };
    let (a, b, c) = (matrix(), matrix(), matrix());
    Ok(Pce::from_parts(h.circuit_id, h.shape, coeffs, a, b, c)?)
}
