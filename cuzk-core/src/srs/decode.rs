//! Reading `.params` and `.vk` files: memory-mapped, points decoded and
//! validated in parallel, every failure reported with section and offset.

use super::{Parameters, ParamsError, PointFault, VerifyingKey};
use crate::arith::MsmAffine;
use blst::{
    blst_p1_affine, blst_p1_affine_in_g1, blst_p1_deserialize, blst_p2_affine, blst_p2_affine_in_g2, blst_p2_deserialize, BLST_ERROR,
};
use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use std::path::Path;

/// How much to check while reading.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Check that every point is in the prime-order subgroup (the costly
    /// part of validation). Only turn off for files you trust, such as
    /// ones this program wrote and verified before.
    pub subgroup_check: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { subgroup_check: true }
    }
}

impl ReadOptions {
    /// Skip subgroup checks (the on-curve check always runs).
    pub fn trusted() -> Self {
        Self { subgroup_check: false }
    }
}

/// A point type as it is stored in params files.
pub(crate) trait FilePoint: MsmAffine {
    /// Decodes an uncompressed point, checking encoding and curve equation.
    fn decode(bytes: &[u8]) -> Result<Self, PointFault>;
    fn in_subgroup(&self) -> bool;
}

fn fault(e: BLST_ERROR) -> Result<(), PointFault> {
    match e {
        BLST_ERROR::BLST_SUCCESS => Ok(()),
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => Err(PointFault::NotOnCurve),
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => Err(PointFault::NotInSubgroup),
        _ => Err(PointFault::BadEncoding),
    }
}

macro_rules! impl_file_point {
    ($affine:ty, $raw:ty, $deserialize:ident, $in_group:ident) => {
        impl FilePoint for $affine {
            fn decode(bytes: &[u8]) -> Result<Self, PointFault> {
                debug_assert_eq!(bytes.len(), Self::UNCOMPRESSED_BYTES);
                // blst would read a compressed point here; the files hold
                // uncompressed ones only.
                if bytes[0] & 0x80 != 0 {
                    return Err(PointFault::BadEncoding);
                }
                let mut raw = <$raw>::default();
                // SAFETY: `bytes` holds a full uncompressed encoding.
                fault(unsafe { $deserialize(&mut raw, bytes.as_ptr()) })?;
                // SAFETY: the blstrs affine type is repr(transparent) over raw.
                let p: $affine = unsafe { std::mem::transmute::<$raw, $affine>(raw) };
                if bool::from(p.is_identity()) {
                    return Err(PointFault::Infinity);
                }
                Ok(p)
            }

            fn in_subgroup(&self) -> bool {
                // SAFETY: repr(transparent), see above.
                unsafe { $in_group(self as *const $affine as *const $raw) }
            }
        }
    };
}

impl_file_point!(G1Affine, blst_p1_affine, blst_p1_deserialize, blst_p1_affine_in_g1);
impl_file_point!(G2Affine, blst_p2_affine, blst_p2_deserialize, blst_p2_affine_in_g2);

/// A read position in a file's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, section: &'static str, n: usize) -> Result<&'a [u8], ParamsError> {
        let available = self.bytes.len() - self.pos;
        if n > available {
            return Err(ParamsError::Truncated { section, offset: self.pos, needed: n, available });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u32_be(&mut self, section: &'static str) -> Result<usize, ParamsError> {
        let b = self.take(section, 4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn point<A: FilePoint>(&mut self, section: &'static str, opts: ReadOptions) -> Result<A, ParamsError> {
        let offset = self.pos;
        let p = self.take(section, A::UNCOMPRESSED_BYTES)?;
        let invalid = |fault| ParamsError::InvalidPoint { section, index: 0, offset, fault };
        let p = A::decode(p).map_err(invalid)?;
        if opts.subgroup_check && !p.in_subgroup() {
            return Err(invalid(PointFault::NotInSubgroup));
        }
        Ok(p)
    }

    /// [`Self::points`], then `done` with their bytes.
    fn section<A: FilePoint>(
        &mut self,
        section: &'static str,
        opts: ReadOptions,
        done: &dyn Fn(std::ops::Range<usize>),
    ) -> Result<Vec<A>, ParamsError> {
        let start = self.pos;
        let points = self.points(section, opts)?;
        done(start..self.pos);
        Ok(points)
    }

    /// A u32 big-endian count followed by that many points.
    fn points<A: FilePoint>(&mut self, section: &'static str, opts: ReadOptions) -> Result<Vec<A>, ParamsError> {
        let count = self.u32_be(section)?;
        let base = self.pos;
        let bytes = self.take(section, count * A::UNCOMPRESSED_BYTES)?;
        decode_points(section, bytes, base, opts)
    }
}

/// Decodes and validates `bytes.len() / size` points in parallel; on
/// failure reports the first bad point. The points are written straight
/// into fresh memory by the threads that decode them: a production SRS is
/// ~45 GiB, which one thread would otherwise fill with placeholders first,
/// page fault by page fault, while the others wait.
fn decode_points<A: FilePoint>(section: &'static str, bytes: &[u8], base: usize, opts: ReadOptions) -> Result<Vec<A>, ParamsError> {
    let mut out = Vec::new();
    decode_points_into(section, bytes, base, 0, opts, &mut out)?;
    Ok(out)
}

/// [`decode_points`] into `out` (cleared first; its memory reused), the
/// points being a section's from index `first` on (what a fault names).
pub(super) fn decode_points_into<A: FilePoint>(
    section: &'static str,
    bytes: &[u8],
    base: usize,
    first: usize,
    opts: ReadOptions,
    out: &mut Vec<A>,
) -> Result<(), ParamsError> {
    let size = A::UNCOMPRESSED_BYTES;
    let count = bytes.len() / size;
    out.clear();
    out.reserve(count);
    let errors = std::sync::Mutex::new(Vec::<(usize, PointFault)>::new());
    crate::par::for_each_chunk_mut(&mut out.spare_capacity_mut()[..count], 1024, |start, chunk| {
        for (k, slot) in chunk.iter_mut().enumerate() {
            let i = start + k;
            let decoded = A::decode(&bytes[i * size..(i + 1) * size]).and_then(|p| {
                if opts.subgroup_check && !p.in_subgroup() {
                    Err(PointFault::NotInSubgroup)
                } else {
                    Ok(p)
                }
            });
            match decoded {
                Ok(p) => {
                    slot.write(p);
                }
                Err(f) => {
                    errors.lock().unwrap().push((i, f));
                    return;
                }
            }
        }
    });
    if let Some(&(i, fault)) = errors.into_inner().unwrap().iter().min_by_key(|(i, _)| *i) {
        return Err(ParamsError::InvalidPoint { section, index: first + i, offset: base + i * size, fault });
    }
    // SAFETY: no chunk failed, so every one of the `count` slots was written.
    unsafe { out.set_len(count) };
    Ok(())
}

/// The subgroup check, in parallel, of points already decoded from byte
/// offset `base` on; reports the first point outside the subgroup.
fn check_subgroup<A: FilePoint>(section: &'static str, base: usize, points: &[A]) -> Result<(), ParamsError> {
    match crate::par::first_index(points.len(), 1024, |i| !points[i].in_subgroup()) {
        Some(index) => Err(ParamsError::InvalidPoint {
            section,
            index,
            offset: base + index * A::UNCOMPRESSED_BYTES,
            fault: PointFault::NotInSubgroup,
        }),
        None => Ok(()),
    }
}

fn read_vk(cur: &mut Cursor, opts: ReadOptions) -> Result<VerifyingKey, ParamsError> {
    Ok(VerifyingKey {
        alpha_g1: cur.point("vk.alpha_g1", opts)?,
        beta_g1: cur.point("vk.beta_g1", opts)?,
        beta_g2: cur.point("vk.beta_g2", opts)?,
        gamma_g2: cur.point("vk.gamma_g2", opts)?,
        delta_g1: cur.point("vk.delta_g1", opts)?,
        delta_g2: cur.point("vk.delta_g2", opts)?,
        ic: cur.points("vk.ic", opts)?,
    })
}

/// The verifying key at the head of `bytes` (a prefix of a `.params` or
/// `.vk` file: errors name the offsets of the file), and where it ends.
pub(super) fn read_vk_head(bytes: &[u8], opts: ReadOptions) -> Result<(VerifyingKey, usize), ParamsError> {
    let mut cur = Cursor { bytes, pos: 0 };
    let vk = read_vk(&mut cur, opts)?;
    Ok((vk, cur.pos))
}

fn expect_end(cur: &Cursor) -> Result<(), ParamsError> {
    let extra = cur.bytes.len() - cur.pos;
    if extra != 0 {
        return Err(ParamsError::TrailingBytes { offset: cur.pos, extra });
    }
    Ok(())
}

/// A file's bytes, memory-mapped read-only (multi-GB files are not copied
/// into a buffer; pages are read as they are touched).
fn map_file(path: &Path) -> Result<memmap2::Mmap, ParamsError> {
    let file = std::fs::File::open(path).map_err(|e| ParamsError::io(path, e))?;
    // SAFETY: the map is read-only; a file truncated underneath us by
    // another process is outside our control, as with any reader of
    // mapped files.
    unsafe { memmap2::Mmap::map(&file) }.map_err(|e| ParamsError::io(path, e))
}

impl VerifyingKey {
    /// The key at the head of a `.params` file (which starts with the
    /// `.vk` bytes); only the head's pages are read.
    pub fn read_params_head(path: &Path, opts: ReadOptions) -> Result<Self, ParamsError> {
        read_vk(&mut Cursor { bytes: &map_file(path)?, pos: 0 }, opts)
    }

    /// Parses a `.vk` file's bytes.
    pub fn from_bytes(bytes: &[u8], opts: ReadOptions) -> Result<Self, ParamsError> {
        let mut cur = Cursor { bytes, pos: 0 };
        let vk = read_vk(&mut cur, opts)?;
        expect_end(&cur)?;
        Ok(vk)
    }

    /// Reads a `.vk` file.
    pub fn read_file(path: &Path, opts: ReadOptions) -> Result<Self, ParamsError> {
        let bytes = std::fs::read(path).map_err(|e| ParamsError::io(path, e))?;
        Self::from_bytes(&bytes, opts)
    }
}

/// A `.params` file's mapping, whose pages are dropped from the process
/// section by section once decoded: else a 47 GiB file's pages count in
/// its resident memory beside the 44 GiB of points decoded from them,
/// until the end of the read.
struct MappedParams(memmap2::Mmap);

impl MappedParams {
    fn done(&self, range: std::ops::Range<usize>) {
        // SAFETY: a read-only shared mapping of a file: its pages dropped
        // here are read again from the file (the page cache) if touched
        // again, with the same bytes; nothing is zeroed. A failure only
        // leaves them mapped.
        let _ = unsafe { self.0.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, range.start, range.len()) };
    }
}

impl Parameters {
    /// Parses a `.params` file's bytes.
    pub fn from_bytes(bytes: &[u8], opts: ReadOptions) -> Result<Self, ParamsError> {
        Self::decode(bytes, opts, &|_| {})
    }

    /// [`Self::from_bytes`], calling `done` with each point section's byte
    /// range once it is decoded.
    fn decode(bytes: &[u8], opts: ReadOptions, done: &dyn Fn(std::ops::Range<usize>)) -> Result<Self, ParamsError> {
        let mut cur = Cursor { bytes, pos: 0 };
        let params = Parameters {
            host_pin: Default::default(),
            vk: read_vk(&mut cur, opts)?,
            h: cur.section("h", opts, done)?,
            l: cur.section("l", opts, done)?,
            a: cur.section("a", opts, done)?,
            b_g1: cur.section("b_g1", opts, done)?,
            b_g2: cur.section("b_g2", opts, done)?,
        };
        expect_end(&cur)?;
        if params.b_g1.len() != params.b_g2.len() {
            return Err(ParamsError::Inconsistent {
                section: "b_g2",
                offset: bytes.len() - params.b_g2.len() * 192 - 4,
                message: format!("{} B_G2 points but {} B_G1 points", params.b_g2.len(), params.b_g1.len()),
            });
        }
        Ok(params)
    }

    /// Reads a `.params` file through a memory map (multi-GB files are not
    /// copied into a buffer first).
    pub fn read_file(path: &Path, opts: ReadOptions) -> Result<Self, ParamsError> {
        let map = MappedParams(map_file(path)?);
        Self::decode(&map.0, opts, &|range| map.done(range))
    }

    /// Reads a `.params` file as [`read_file`](Self::read_file) does while
    /// `also` runs on the file's bytes on a thread of its own (a digest of
    /// the file computed during the decoding); returns both results. (The
    /// pages `also` reads after the decoding dropped them stay mapped until
    /// the end.)
    pub fn read_file_with<T: Send>(path: &Path, opts: ReadOptions, also: impl FnOnce(&[u8]) -> T + Send) -> Result<(Self, T), ParamsError> {
        let map = MappedParams(map_file(path)?);
        let bytes: &[u8] = &map.0;
        std::thread::scope(|s| {
            let other = s.spawn(|| also(bytes));
            let params = Self::decode(bytes, opts, &|range| map.done(range));
            let other = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Ok((params?, other))
        })
    }

    /// The subgroup check of every point, for parameters read with
    /// [`ReadOptions::trusted`] that turn out to need it; a fault names
    /// the point's section and byte offset in the file.
    pub fn check_subgroups(&self) -> Result<(), ParamsError> {
        let vk = &self.vk;
        let (g1, g2) = (G1Affine::UNCOMPRESSED_BYTES, G2Affine::UNCOMPRESSED_BYTES);
        let head: [(&'static str, &[G1Affine], &[G2Affine]); 6] = [
            ("vk.alpha_g1", std::slice::from_ref(&vk.alpha_g1), &[]),
            ("vk.beta_g1", std::slice::from_ref(&vk.beta_g1), &[]),
            ("vk.beta_g2", &[], std::slice::from_ref(&vk.beta_g2)),
            ("vk.gamma_g2", &[], std::slice::from_ref(&vk.gamma_g2)),
            ("vk.delta_g1", std::slice::from_ref(&vk.delta_g1), &[]),
            ("vk.delta_g2", &[], std::slice::from_ref(&vk.delta_g2)),
        ];
        let mut offset = 0;
        for (section, p1, p2) in head {
            check_subgroup(section, offset, p1)?;
            check_subgroup(section, offset, p2)?;
            offset += p1.len() * g1 + p2.len() * g2;
        }
        // Each vector: a 4-byte count, then its points.
        for (section, points) in [("vk.ic", &vk.ic), ("h", &self.h), ("l", &self.l), ("a", &self.a), ("b_g1", &self.b_g1)] {
            check_subgroup(section, offset + 4, points)?;
            offset += 4 + points.len() * g1;
        }
        check_subgroup("b_g2", offset + 4, &self.b_g2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// `done` is given each point section once decoded, in file order,
    /// together the whole file after the verifying key; the mapped read
    /// (which drops those pages) gives the same parameters.
    #[test]
    fn each_point_section_is_done_once_decoded() {
        let spec: crate::circuits::CircuitSpec = "synthetic:64:2".parse().unwrap();
        let params = crate::groth16::generate_random_parameters(spec.blank(), &mut rand::thread_rng()).unwrap();
        let mut bytes = Vec::new();
        params.write(&mut bytes).unwrap();
        let ranges = Mutex::new(Vec::new());
        let decoded = Parameters::decode(&bytes, ReadOptions::default(), &|r| ranges.lock().unwrap().push(r)).unwrap();
        assert_eq!(decoded, params);
        let ranges = ranges.into_inner().unwrap();
        assert_eq!(ranges.len(), 5, "h, l, a, b_g1, b_g2: {ranges:?}");
        let vk_bytes = bytes.len() - ranges.iter().map(|r| r.len()).sum::<usize>();
        assert_eq!(ranges[0].start, vk_bytes);
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "{ranges:?}");
        assert_eq!(ranges[4].end, bytes.len());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.params");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(Parameters::read_file(&path, ReadOptions::default()).unwrap(), params);
        let (read, len) = Parameters::read_file_with(&path, ReadOptions::default(), |b| b.len()).unwrap();
        assert_eq!((read, len), (params, bytes.len()));
    }
}
