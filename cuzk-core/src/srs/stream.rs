//! Reading a `.params` file in bounded slices, for a load that puts the
//! points straight into the devices' copies: first its head (the verifying
//! key and each point vector's length: all a proving key's shape needs),
//! then its points, decoded and checked as [`Parameters::read_file`]
//! checks them, one slice at a time, each handed to a sink and dropped.
//! The host holds a few slices ([`stream_host_bytes`]), never the points
//! whole (a 32 GiB PoRep's are 44 GiB). Every byte of the file goes, in
//! order, to a digest as it is read.
//!
//! [`ParamsFile`] adds the rule of trusting a file by its published
//! digest, as the whole read of a param cache applies it.
//!
//! [`Parameters::read_file`]: super::Parameters::read_file

use super::decode::{decode_points_into, read_vk_head};
use super::{KeyShape, ParamsError, PointCounts, ReadOptions, VerifyingKey};
use blstrs::{G1Affine, G2Affine};
use crossbeam::channel;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A point vector of a proving key, in file order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    H,
    L,
    A,
    BG1,
    BG2,
}

impl Section {
    pub const ALL: [Section; 5] = [Section::H, Section::L, Section::A, Section::BG1, Section::BG2];

    /// Its name in errors, as [`ParamsError`] names sections.
    pub fn name(self) -> &'static str {
        match self {
            Section::H => "h",
            Section::L => "l",
            Section::A => "a",
            Section::BG1 => "b_g1",
            Section::BG2 => "b_g2",
        }
    }

    /// Bytes of one of its points in the file.
    pub fn point_bytes(self) -> usize {
        match self {
            Section::BG2 => G2_BYTES,
            _ => G1_BYTES,
        }
    }
}

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;
/// The verifying key's points before its IC count: three G1, three G2.
const VK_FIXED_BYTES: usize = 3 * G1_BYTES + 3 * G2_BYTES;

/// Where a point vector lies in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    /// Byte offset of its first point (its count is the 4 bytes before).
    offset: usize,
    count: usize,
}

/// The head of a `.params` file: its verifying key, checked, and where
/// each point vector lies, the file's layout checked whole (a truncated
/// file, trailing bytes or B vectors of different lengths are found
/// here, before any point is read, with the errors a whole read gives).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsHead {
    pub vk: VerifyingKey,
    spans: [Span; 5],
    /// Bytes of the verifying key at the file's start.
    vk_bytes: usize,
}

impl KeyShape for ParamsHead {
    fn vk(&self) -> &VerifyingKey {
        &self.vk
    }

    fn counts(&self) -> PointCounts {
        let [h, l, a, b_g1, b_g2] = self.spans.map(|s| s.count);
        PointCounts { h, l, a, b_g1, b_g2 }
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ParamsError + '_ {
    move |e| ParamsError::io(path, e)
}

fn u32_at(file: &File, path: &Path, offset: usize) -> Result<usize, ParamsError> {
    let mut b = [0u8; 4];
    file.read_exact_at(&mut b, offset as u64).map_err(io(path))?;
    Ok(u32::from_be_bytes(b) as usize)
}

impl ParamsHead {
    /// Reads the head of `path` (the verifying key's points checked as
    /// `opts` says; the vectors' counts found by seeking past their points).
    pub fn read(path: &Path, opts: ReadOptions) -> Result<Self, ParamsError> {
        let file = File::open(path).map_err(io(path))?;
        Self::read_from(&file, path, opts)
    }

    fn read_from(file: &File, path: &Path, opts: ReadOptions) -> Result<Self, ParamsError> {
        let len = file.metadata().map_err(io(path))?.len() as usize;
        // The key's bytes, or the whole file where it is shorter (whose
        // read then fails as a whole read's does, naming the same offsets).
        let ic = if len >= VK_FIXED_BYTES + 4 { u32_at(file, path, VK_FIXED_BYTES)? } else { 0 };
        let mut head = vec![0u8; len.min(VK_FIXED_BYTES + 4 + ic * G1_BYTES)];
        file.read_exact_at(&mut head, 0).map_err(io(path))?;
        let (vk, vk_bytes) = read_vk_head(&head, opts)?;
        let mut pos = vk_bytes;
        let mut spans = [Span { offset: 0, count: 0 }; 5];
        for (span, section) in spans.iter_mut().zip(Section::ALL) {
            let name = section.name();
            if len - pos < 4 {
                return Err(ParamsError::Truncated { section: name, offset: pos, needed: 4, available: len - pos });
            }
            let count = u32_at(file, path, pos)?;
            pos += 4;
            let needed = count * section.point_bytes();
            if needed > len - pos {
                return Err(ParamsError::Truncated { section: name, offset: pos, needed, available: len - pos });
            }
            *span = Span { offset: pos, count };
            pos += needed;
        }
        if pos != len {
            return Err(ParamsError::TrailingBytes { offset: pos, extra: len - pos });
        }
        let (b_g1, b_g2) = (spans[3].count, spans[4].count);
        if b_g1 != b_g2 {
            return Err(ParamsError::Inconsistent {
                section: "b_g2",
                offset: len - b_g2 * G2_BYTES - 4,
                message: format!("{b_g2} B_G2 points but {b_g1} B_G1 points"),
            });
        }
        Ok(ParamsHead { vk, spans, vk_bytes })
    }

    /// Whether `other` is the same key with the same vectors (the file did
    /// not change between two reads).
    pub fn same_key(&self, other: &ParamsHead) -> bool {
        self == other
    }
}

/// Validated points of one vector, from its point `first` on.
#[derive(Clone, Copy, Debug)]
pub struct PointSlice<'a> {
    pub section: Section,
    pub first: usize,
    pub points: SlicePoints<'a>,
}

#[derive(Clone, Copy, Debug)]
pub enum SlicePoints<'a> {
    G1(&'a [G1Affine]),
    G2(&'a [G2Affine]),
}

impl PointSlice<'_> {
    pub fn len(&self) -> usize {
        match self.points {
            SlicePoints::G1(p) => p.len(),
            SlicePoints::G2(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a streamed read stopped: the file (with the error a whole read
/// gives for it), or the sink.
#[derive(Debug)]
pub enum StreamError<E> {
    Params(ParamsError),
    Sink(E),
}

impl<E> From<ParamsError> for StreamError<E> {
    fn from(e: ParamsError) -> Self {
        StreamError::Params(e)
    }
}

/// Points in one slice of `slice_bytes` (at least one).
fn slice_points(slice_bytes: usize, section: Section) -> usize {
    (slice_bytes / section.point_bytes()).max(1)
}

/// Host bytes a streamed read in slices of `slice_bytes` holds at most:
/// two slices of the file's bytes (one read while the other is decoded)
/// and one of decoded points (a point takes as many bytes decoded as in
/// the file). A slice holds one point at least.
pub fn stream_host_bytes(slice_bytes: usize) -> u64 {
    3 * slice_bytes.max(G2_BYTES) as u64
}

/// A run of the file's bytes, in file order.
#[derive(Clone, Copy, Debug)]
struct Piece {
    offset: usize,
    len: usize,
    what: PieceOf,
}

#[derive(Clone, Copy, Debug)]
enum PieceOf {
    /// The verifying key.
    Vk,
    /// The count of vector `i`.
    Count(usize),
    /// Points of a vector from `first` on.
    Points(Section, usize),
}

impl ParamsHead {
    /// The file's bytes as the read takes them: the key, then each
    /// vector's count and its points in slices of `slice_bytes`.
    fn pieces(&self, slice_bytes: usize) -> Vec<Piece> {
        let mut pieces = vec![Piece { offset: 0, len: self.vk_bytes, what: PieceOf::Vk }];
        for (i, (span, section)) in self.spans.iter().zip(Section::ALL).enumerate() {
            pieces.push(Piece { offset: span.offset - 4, len: 4, what: PieceOf::Count(i) });
            let per = slice_points(slice_bytes, section);
            let size = section.point_bytes();
            for first in (0..span.count).step_by(per) {
                let n = per.min(span.count - first);
                pieces.push(Piece { offset: span.offset + first * size, len: n * size, what: PieceOf::Points(section, first) });
            }
        }
        pieces
    }
}

/// Reads the points of the `.params` file at `path` in slices of about
/// `slice_bytes`, checked as [`Parameters::read_file`] with `opts` checks
/// them, handing each slice to `sink` in file order; every byte of the
/// file goes to `digest`, in order, as it is read (on a thread of its own,
/// reading ahead by one slice). The first error stops the read: the
/// file's (the first bad point, as a whole read names it), or the sink's.
/// Returns the file's head.
///
/// [`Parameters::read_file`]: super::Parameters::read_file
pub fn stream_points<E>(
    path: &Path,
    opts: ReadOptions,
    slice_bytes: usize,
    digest: &mut (dyn FnMut(&[u8]) + Send),
    sink: &mut dyn FnMut(PointSlice<'_>) -> Result<(), E>,
) -> Result<ParamsHead, StreamError<E>> {
    let file = File::open(path).map_err(io(path))?;
    let head = ParamsHead::read_from(&file, path, opts)?;
    let pieces = head.pieces(slice_bytes);
    std::thread::scope(|s| {
        // Two buffers of file bytes for the points go round: one read while
        // the other is decoded.
        // (Grown to a slice by their first use: a file smaller than one
        // takes no more.)
        let (free_tx, free_rx) = channel::bounded::<Vec<u8>>(2);
        for _ in 0..2 {
            free_tx.send(Vec::new()).expect("room for both buffers");
        }
        let (full_tx, full_rx) = channel::bounded(1);
        let (file, pieces) = (&file, &pieces);
        s.spawn(move || read_pieces(file, path, pieces, free_rx, full_tx, digest));
        decode_pieces(&head, opts, full_rx, free_tx, sink)
    })?;
    Ok(head)
}

/// The reading side of [`stream_points`]: each piece read (into a buffer
/// from `free` where it holds points), fed to `digest` and sent on
/// `full`. Stops at the first error (sent on) or once the decoding side
/// has stopped (its channels closed).
fn read_pieces(
    file: &File,
    path: &Path,
    pieces: &[Piece],
    free: channel::Receiver<Vec<u8>>,
    full: channel::Sender<Result<(Piece, Vec<u8>), ParamsError>>,
    digest: &mut (dyn FnMut(&[u8]) + Send),
) {
    for &piece in pieces {
        let mut buf = match piece.what {
            PieceOf::Points(..) => match free.recv() {
                Ok(b) => b,
                Err(_) => return,
            },
            _ => Vec::new(),
        };
        // Only a shorter last slice shrinks it; the next full one zeroes
        // just the difference.
        buf.resize(piece.len, 0);
        if let Err(e) = file.read_exact_at(&mut buf, piece.offset as u64) {
            let _ = full.send(Err(ParamsError::io(path, e)));
            return;
        }
        digest(&buf);
        if full.send(Ok((piece, buf))).is_err() {
            return;
        }
    }
}

/// The decoding side of [`stream_points`]: each slice of points decoded
/// and checked into one reused vector, handed to `sink`, its buffer sent
/// back on `free`. The key and the counts read again must be the head's:
/// else the file changed since its head was read.
fn decode_pieces<E>(
    head: &ParamsHead,
    opts: ReadOptions,
    full: channel::Receiver<Result<(Piece, Vec<u8>), ParamsError>>,
    free: channel::Sender<Vec<u8>>,
    sink: &mut dyn FnMut(PointSlice<'_>) -> Result<(), E>,
) -> Result<(), StreamError<E>> {
    let changed = |section: &'static str, offset: usize| ParamsError::Inconsistent {
        section,
        offset,
        message: "the file changed while it was read".into(),
    };
    let mut g1: Vec<G1Affine> = Vec::new();
    let mut g2: Vec<G2Affine> = Vec::new();
    for received in full {
        let (piece, buf) = received?;
        match piece.what {
            PieceOf::Vk => {
                if read_vk_head(&buf, opts)?.0 != head.vk {
                    return Err(changed("vk", 0).into());
                }
            }
            PieceOf::Count(i) => {
                if u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize != head.spans[i].count {
                    return Err(changed(Section::ALL[i].name(), piece.offset).into());
                }
            }
            PieceOf::Points(section, first) => {
                let points = if section == Section::BG2 {
                    // The G1 vectors are done: their buffer goes first.
                    g1 = Vec::new();
                    decode_points_into(section.name(), &buf, piece.offset, first, opts, &mut g2)?;
                    SlicePoints::G2(&g2)
                } else {
                    decode_points_into(section.name(), &buf, piece.offset, first, opts, &mut g1)?;
                    SlicePoints::G1(&g1)
                };
                sink(PointSlice { section, first, points }).map_err(StreamError::Sink)?;
                // The reader may have stopped (an error of its own, sent
                // before this buffer came back).
                let _ = free.send(buf);
            }
        }
    }
    Ok(())
}

/// A digest of a file's bytes, fed in order.
pub trait FileDigest: Send {
    fn update(&mut self, bytes: &[u8]);
    /// The digest as the published list writes it.
    fn finish(self: Box<Self>) -> String;
}

/// The digest that makes a file's subgroup checks unnecessary: the one
/// published for it (an official file), and how to compute it.
#[derive(Clone)]
pub struct TrustedDigest {
    pub expected: String,
    pub digest: fn() -> Box<dyn FileDigest>,
}

/// A `.params` file as a circuit's source reads it: where it is, what to
/// check while reading, and the digest that makes the subgroup checks
/// unnecessary where it has one.
#[derive(Clone)]
pub struct ParamsFile {
    pub path: PathBuf,
    pub opts: ReadOptions,
    /// Used only where `opts` asks for the subgroup checks.
    pub trusted_by: Option<TrustedDigest>,
}

impl ParamsFile {
    /// The file's head, its key checked as [`Self::stream`]'s first read
    /// checks it.
    pub fn head(&self) -> Result<ParamsHead, ParamsError> {
        ParamsHead::read(&self.path, self.first_read())
    }

    /// The digest to check the file by, where `opts` asks for the
    /// subgroup checks and it has one.
    fn trusted(&self) -> Option<&TrustedDigest> {
        self.trusted_by.as_ref().filter(|_| self.opts.subgroup_check)
    }

    /// What the first read checks: no subgroups where a digest may make
    /// them unnecessary (a second read checks them where it does not).
    fn first_read(&self) -> ReadOptions {
        if self.trusted().is_some() {
            ReadOptions::trusted()
        } else {
            self.opts
        }
    }

    /// The file's points streamed to `sink` in slices of about
    /// `slice_bytes` ([`stream_points`]), checked as the whole read of a
    /// param cache checks them: where the file has a trusted digest and
    /// `opts` asks for the subgroup checks, they are skipped while the
    /// digest is computed; a digest that differs (not the official file)
    /// is logged with both, and the file is then read again with every
    /// point checked (the sink has its slices already: it is not called
    /// again), the digest again the same or else the file changed.
    pub fn stream<E>(
        &self,
        slice_bytes: usize,
        sink: &mut dyn FnMut(PointSlice<'_>) -> Result<(), E>,
    ) -> Result<ParamsHead, StreamError<E>> {
        let Some(trusted) = self.trusted() else {
            return stream_points(&self.path, self.opts, slice_bytes, &mut |_| {}, sink);
        };
        let t = std::time::Instant::now();
        let mut digest = (trusted.digest)();
        let head = stream_points(&self.path, self.first_read(), slice_bytes, &mut |b| digest.update(b), sink)?;
        let found = digest.finish();
        let path = self.path.display();
        if found == trusted.expected {
            log::info!("params trusted by published digest file={path} digest={found} ms={}", t.elapsed().as_millis());
            return Ok(head);
        }
        log::warn!(
            "params digest differs from the published one file={path} expected={} found={found}: not the official file, checking every point",
            trusted.expected
        );
        let mut again = (trusted.digest)();
        let mut no_sink = |_: PointSlice<'_>| Ok::<(), std::convert::Infallible>(());
        let checked = stream_points(&self.path, ReadOptions::default(), slice_bytes, &mut |b| again.update(b), &mut no_sink).map_err(
            |e| match e {
                StreamError::Params(e) => StreamError::Params(e),
                StreamError::Sink(never) => match never {},
            },
        )?;
        // (The key read again, its subgroups checked this time.)
        if again.finish() != found || !checked.same_key(&head) {
            let message = "the file changed while it was read".into();
            return Err(StreamError::Params(ParamsError::Inconsistent { section: "file", offset: 0, message }));
        }
        Ok(head)
    }
}

#[cfg(test)]
mod tests;
