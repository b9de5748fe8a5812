use super::*;
use crate::srs::{Parameters, PointFault};
use ff::Field;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Parameters small enough to read in a moment, with vectors of several
/// lengths, and their file in a temporary folder.
fn fixture() -> (Parameters, Vec<u8>, tempfile::TempDir, PathBuf) {
    let spec: crate::circuits::CircuitSpec = "synthetic:300:3".parse().unwrap();
    let params = crate::groth16::generate_random_parameters(spec.blank(), &mut rand::thread_rng()).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.params");
    std::fs::write(&path, &bytes).unwrap();
    (params, bytes, dir, path)
}

/// The points a streamed read hands out, gathered back into vectors (each
/// slice must follow the last of its vector), and every byte its digest
/// was fed.
struct Gathered {
    g1: [Vec<G1Affine>; 4],
    b_g2: Vec<G2Affine>,
    slices: usize,
    fed: Vec<u8>,
}

fn stream_all(path: &Path, opts: ReadOptions, slice_bytes: usize) -> Result<(ParamsHead, Gathered), ParamsError> {
    let mut got = Gathered { g1: Default::default(), b_g2: Vec::new(), slices: 0, fed: Vec::new() };
    let mut fed = Vec::new();
    let mut sink = |s: PointSlice<'_>| {
        assert!(!s.is_empty());
        assert!(s.len() * s.section.point_bytes() <= slice_bytes.max(G2_BYTES), "a slice of {} points", s.len());
        got.slices += 1;
        match s.points {
            SlicePoints::G1(p) => {
                let v = &mut got.g1[Section::ALL.iter().position(|&x| x == s.section).unwrap()];
                assert_eq!(s.first, v.len(), "{:?} slices in order", s.section);
                v.extend_from_slice(p);
            }
            SlicePoints::G2(p) => {
                assert_eq!((s.section, s.first), (Section::BG2, got.b_g2.len()));
                got.b_g2.extend_from_slice(p);
            }
        }
        Ok::<(), std::convert::Infallible>(())
    };
    let head = stream_points(path, opts, slice_bytes, &mut |b| fed.extend_from_slice(b), &mut sink).map_err(|e| match e {
        StreamError::Params(e) => e,
        StreamError::Sink(never) => match never {},
    })?;
    got.fed = fed;
    Ok((head, got))
}

#[test]
fn slices_of_any_size_give_the_points_a_whole_read_gives() {
    let (params, bytes, _dir, path) = fixture();
    assert!(params.h.len() > 3 && params.b_g2.len() > 3, "{:?}", params.counts());
    // Under one point, one point, odd sizes that leave a short last slice
    // in every vector, and the whole file.
    for slice_bytes in [1, 96, 97, 5 * 96 + 1, 191, 1000, 4099, 7 * 192 + 13, bytes.len()] {
        let (head, got) = stream_all(&path, ReadOptions::default(), slice_bytes).unwrap();
        assert_eq!(head.vk, params.vk);
        assert_eq!(head.counts(), params.counts());
        let [h, l, a, b_g1] = got.g1;
        assert_eq!(
            (h, l, a, b_g1, got.b_g2),
            (params.h.clone(), params.l.clone(), params.a.clone(), params.b_g1.clone(), params.b_g2.clone())
        );
        assert_eq!(got.fed, bytes, "the digest is fed the whole file in order ({slice_bytes} B slices)");
        let slices = Section::ALL.iter().map(|&s| params.counts_of(s).div_ceil(slice_points(slice_bytes, s))).sum::<usize>();
        assert_eq!(got.slices, slices, "{slice_bytes} B slices");
    }
    assert_eq!(ParamsHead::read(&path, ReadOptions::default()).unwrap().counts(), params.counts());
}

impl Parameters {
    fn counts_of(&self, s: Section) -> usize {
        let c = self.counts();
        match s {
            Section::H => c.h,
            Section::L => c.l,
            Section::A => c.a,
            Section::BG1 => c.b_g1,
            Section::BG2 => c.b_g2,
        }
    }
}

/// A point on E(Fp) (y² = x³ + 4) outside the prime-order subgroup, as
/// the file encodes it.
fn point_outside_subgroup() -> [u8; 96] {
    let mut x = blstrs::Fp::ONE;
    loop {
        x += blstrs::Fp::ONE;
        let Some(y) = Option::<blstrs::Fp>::from((x.square() * x + blstrs::Fp::from(4u64)).sqrt()) else { continue };
        let mut out = [0u8; 96];
        out[..48].copy_from_slice(&x.to_bytes_be());
        out[48..].copy_from_slice(&y.to_bytes_be());
        let point = Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(&out));
        if point.is_some_and(|p| !bool::from(p.is_torsion_free())) {
            return out;
        }
    }
}

/// The byte offset of `section`'s first point in `params`' file.
fn first_point(params: &Parameters, section: Section) -> usize {
    let mut at = 3 * G1_BYTES + 3 * G2_BYTES + 4 + params.vk.ic.len() * G1_BYTES;
    for s in Section::ALL {
        if s == section {
            return at + 4;
        }
        at += 4 + params.counts_of(s) * s.point_bytes();
    }
    unreachable!("every section is in ALL")
}

/// The error of a streamed read of `bytes` and that of a whole read, for
/// each slice size.
fn both_errors(bytes: &[u8], opts: ReadOptions) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.params");
    std::fs::write(&path, bytes).unwrap();
    let whole = Parameters::read_file(&path, opts).expect_err("the whole read fails");
    [1, 97, 1000, bytes.len()]
        .into_iter()
        .map(|slice| {
            let streamed = stream_all(&path, opts, slice).err().unwrap_or_else(|| panic!("{slice} B slices: the streamed read succeeds"));
            assert_eq!(std::mem::discriminant(&streamed), std::mem::discriminant(&whole), "{streamed} / {whole}");
            (streamed.to_string(), whole.to_string())
        })
        .collect()
}

#[test]
fn a_bad_point_a_truncated_file_or_a_wrong_layout_fail_as_a_whole_read_does() {
    let (params, bytes, _dir, _path) = fixture();
    let l3 = first_point(&params, Section::L) + 3 * G1_BYTES;
    let mut off_curve = bytes.clone();
    off_curve[l3 + 95] ^= 1;
    let mut outside = bytes.clone();
    let b_g1_2 = first_point(&params, Section::BG1) + 2 * G1_BYTES;
    outside[b_g1_2..b_g1_2 + 96].copy_from_slice(&point_outside_subgroup());
    let mut compressed = bytes.clone();
    compressed[first_point(&params, Section::BG2) + G2_BYTES] |= 0x80;
    let mut bad_vk = bytes.clone();
    bad_vk[G1_BYTES - 1] ^= 1;
    let truncated_in_a = bytes[..first_point(&params, Section::A) + 10].to_vec();
    let truncated_in_count = bytes[..first_point(&params, Section::BG2) - 2].to_vec();
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(&[0; 7]);
    // One B_G2 point fewer, its count to match: the B vectors differ.
    let mut b_mismatch = bytes[..bytes.len() - G2_BYTES].to_vec();
    let count_at = first_point(&params, Section::BG2) - 4;
    b_mismatch[count_at..count_at + 4].copy_from_slice(&(params.b_g2.len() as u32 - 1).to_be_bytes());
    for (name, file, opts) in [
        ("off the curve", off_curve, ReadOptions::default()),
        ("outside the subgroup", outside.clone(), ReadOptions::default()),
        ("compressed flag", compressed, ReadOptions::trusted()),
        ("bad key point", bad_vk, ReadOptions::default()),
        ("truncated in a", truncated_in_a, ReadOptions::default()),
        ("truncated in a count", truncated_in_count, ReadOptions::default()),
        ("trailing bytes", trailing, ReadOptions::default()),
        ("B vectors of different lengths", b_mismatch, ReadOptions::default()),
    ] {
        for (streamed, whole) in both_errors(&file, opts) {
            assert_eq!(streamed, whole, "{name}");
        }
    }
    // Outside the subgroup is found only where the checks are on.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outside.params");
    std::fs::write(&path, &outside).unwrap();
    assert!(stream_all(&path, ReadOptions::trusted(), 1000).is_ok());
    let e = stream_all(&path, ReadOptions::default(), 1000).err().unwrap();
    assert!(
        matches!(e, ParamsError::InvalidPoint { section: "b_g1", index: 2, fault: PointFault::NotInSubgroup, offset } if offset == b_g1_2),
        "{e}"
    );
}

#[test]
fn the_sinks_error_stops_the_read() {
    let (_params, _bytes, _dir, path) = fixture();
    let mut calls = 0;
    let mut sink = |s: PointSlice<'_>| {
        calls += 1;
        if s.section == Section::L {
            return Err("device full");
        }
        Ok(())
    };
    match stream_points(&path, ReadOptions::default(), 97, &mut |_| {}, &mut sink) {
        Err(StreamError::Sink("device full")) => {}
        other => panic!("expected the sink's error, got {other:?}"),
    }
    assert!(calls > 1);
}

/// Digests for the tests: a count of the reads that computed one (a
/// static per test, as a `fn` captures nothing), each the byte count.
struct CountingDigest(usize);

impl FileDigest for CountingDigest {
    fn update(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    fn finish(self: Box<Self>) -> String {
        format!("{} bytes", self.0)
    }
}

static MATCHING_READS: AtomicUsize = AtomicUsize::new(0);
static DIFFERING_READS: AtomicUsize = AtomicUsize::new(0);

fn params_file(path: &Path, expected: String, digest: fn() -> Box<dyn FileDigest>) -> ParamsFile {
    ParamsFile { path: path.to_path_buf(), opts: ReadOptions::default(), trusted_by: Some(TrustedDigest { expected, digest }) }
}

/// Gathers the G1 points a [`ParamsFile`] streams, counting its slices.
fn gather(file: &ParamsFile) -> Result<(ParamsHead, usize, usize), ParamsError> {
    let (mut slices, mut points) = (0, 0);
    let mut sink = |s: PointSlice<'_>| {
        slices += 1;
        points += s.len();
        Ok::<(), std::convert::Infallible>(())
    };
    let head = file.stream(1000, &mut sink).map_err(|e| match e {
        StreamError::Params(e) => e,
        StreamError::Sink(never) => match never {},
    })?;
    Ok((head, slices, points))
}

#[test]
fn a_file_with_its_trusted_digest_is_read_once_without_subgroup_checks() {
    let (params, mut bytes, _dir, path) = fixture();
    let at = first_point(&params, Section::H);
    bytes[at..at + 96].copy_from_slice(&point_outside_subgroup());
    std::fs::write(&path, &bytes).unwrap();
    let digest = || -> Box<dyn FileDigest> {
        MATCHING_READS.fetch_add(1, Ordering::SeqCst);
        Box::new(CountingDigest(0))
    };
    let file = params_file(&path, format!("{} bytes", bytes.len()), digest);
    let (head, _, points) = gather(&file).unwrap();
    assert_eq!(head.counts(), params.counts());
    assert_eq!(points, params.counts().h + params.counts().l + params.counts().a + 2 * params.counts().b_g1);
    assert_eq!(MATCHING_READS.load(Ordering::SeqCst), 1, "one read");
}

#[test]
fn a_file_whose_digest_differs_is_read_again_with_every_point_checked() {
    let (params, bytes, _dir, path) = fixture();
    let digest = || -> Box<dyn FileDigest> {
        DIFFERING_READS.fetch_add(1, Ordering::SeqCst);
        Box::new(CountingDigest(0))
    };
    let file = params_file(&path, "another digest".into(), digest);
    // A valid file: loads; the sink has each slice once.
    let (head, slices, _) = gather(&file).unwrap();
    assert_eq!(head.vk, params.vk);
    let (_, once) = stream_all(&path, ReadOptions::default(), 1000).unwrap();
    assert_eq!(slices, once.slices, "the checking read hands the sink nothing");
    assert_eq!(DIFFERING_READS.load(Ordering::SeqCst), 2, "read again to check every point");
    // A point outside the subgroup: the checking read finds it, with the
    // error a whole read gives.
    let mut outside = bytes.clone();
    let at = first_point(&params, Section::A) + G1_BYTES;
    outside[at..at + 96].copy_from_slice(&point_outside_subgroup());
    std::fs::write(&path, &outside).unwrap();
    let e = gather(&file).err().unwrap();
    assert_eq!(e.to_string(), Parameters::read_file(&path, ReadOptions::default()).err().unwrap().to_string());
    assert!(matches!(e, ParamsError::InvalidPoint { section: "a", index: 1, fault: PointFault::NotInSubgroup, .. }), "{e}");
    // Subgroup checks off: the digest is not looked at.
    let trusting = ParamsFile { opts: ReadOptions::trusted(), ..file };
    let reads = DIFFERING_READS.load(Ordering::SeqCst);
    assert!(gather(&trusting).is_ok());
    assert_eq!(DIFFERING_READS.load(Ordering::SeqCst), reads);
}

#[test]
fn the_host_holds_three_slices_at_most() {
    assert_eq!(stream_host_bytes(256 << 20), 768 << 20);
    // A slice holds one point at least.
    assert_eq!(stream_host_bytes(1), 3 * 192);
}
