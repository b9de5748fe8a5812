//! Bad inputs get named errors, never panics: tampered proofs, wrong
//! inputs or keys fail verification; truncated, oversized or corrupted
//! params files are rejected with the section and byte offset; a params
//! file whose digest is published under its name is trusted.

use blstrs::{Fp, G1Affine, Scalar as Fr};
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::filecoin::{file_digest, FilecoinError, ParamCache, PublishedDigests};
use cuzk_core::groth16::{self, prepare_verifying_key, verify_proof, Proof, ProofError};
use cuzk_core::srs::{Parameters, ParamsError, PointFault, PointSlice, ReadOptions, StreamError, VerifyingKey};
use cuzk_tests::rng;
use ff::Field;
use rand::{Rng, RngCore};

const SPEC: CircuitSpec = CircuitSpec::Synthetic { constraints: 300, inputs: 3 };

fn fixture() -> (Parameters, Vec<u8>) {
    let mut rng = rng("fixture");
    let params = groth16::generate_random_parameters(SPEC.blank(), &mut rng).unwrap();
    let mut bytes = Vec::new();
    params.write(&mut bytes).unwrap();
    (params, bytes)
}

/// Byte offset of the count of section `k` (0 = IC, 1 = H, … 5 = B_G2).
fn section_offset(p: &Parameters, k: usize) -> usize {
    let vk = 96 * 3 + 192 * 3;
    let sizes = [p.vk.ic.len() * 96, p.h.len() * 96, p.l.len() * 96, p.a.len() * 96, p.b_g1.len() * 96];
    vk + sizes[..k].iter().map(|s| s + 4).sum::<usize>()
}

#[test]
fn tampered_proofs_wrong_inputs_and_wrong_keys_fail() {
    let mut rng = rng("tamper");
    let (params, _) = fixture();
    let other = groth16::generate_random_parameters(SPEC.blank(), &mut rng).unwrap();
    let c = SPEC.instance(9);
    let inputs = c.public_inputs().unwrap();
    let proof = groth16::prove(&params, c).unwrap();
    let pvk = prepare_verifying_key(&params.vk);
    assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
    // Wrong VK.
    assert!(!verify_proof(&prepare_verifying_key(&other.vk), &proof, &inputs).unwrap());
    // Wrong input count is an error, not a false.
    assert!(verify_proof(&pvk, &proof, &inputs[1..]).is_err());
    // Wrong input value.
    let mut wrong = inputs.clone();
    wrong[2] += Fr::ONE;
    assert!(!verify_proof(&pvk, &proof, &wrong).unwrap());
    // Every single-bit flip either fails to parse or fails to verify.
    let bytes = proof.to_bytes();
    for _ in 0..64 {
        let mut t = bytes;
        let bit = rng.gen_range(0..192 * 8);
        t[bit / 8] ^= 1 << (bit % 8);
        match Proof::from_bytes(&t) {
            Ok(p) => assert!(!verify_proof(&pvk, &p, &inputs).unwrap(), "flipped bit {bit} verified"),
            Err(ProofError::InvalidPoint(_)) | Err(ProofError::Infinity(_)) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert_eq!(Proof::from_bytes(&bytes[..191]), Err(ProofError::Length(191)));
    // Swapped A and C points are still valid points but do not verify.
    let swapped = Proof { a: proof.c, b: proof.b, c: proof.a };
    assert!(!verify_proof(&pvk, &swapped, &inputs).unwrap());
}

#[test]
fn truncated_params_name_the_section_and_offset() {
    let (params, bytes) = fixture();
    assert_eq!(Parameters::from_bytes(&bytes, ReadOptions::default()).unwrap(), params);
    let cases = [
        (10, "vk.alpha_g1"),
        (96 + 5, "vk.beta_g1"),
        (section_offset(&params, 0) + 2, "vk.ic"),
        (section_offset(&params, 1) + 100, "h"),
        (section_offset(&params, 2) + 4, "l"),
        (section_offset(&params, 3) + 3, "a"),
        (section_offset(&params, 4) + 99, "b_g1"),
        (bytes.len() - 1, "b_g2"),
    ];
    for (cut, section) in cases {
        match Parameters::from_bytes(&bytes[..cut], ReadOptions::default()) {
            Err(ParamsError::Truncated { section: s, offset, .. }) => {
                assert_eq!(s, section, "cut at {cut}");
                assert!(offset <= cut);
            }
            other => panic!("cut at {cut}: expected Truncated in {section}, got {other:?}"),
        }
    }
    let mut long = bytes.clone();
    long.extend_from_slice(&[0u8; 7]);
    assert!(matches!(
        Parameters::from_bytes(&long, ReadOptions::default()),
        Err(ParamsError::TrailingBytes { offset, extra: 7 }) if offset == bytes.len()
    ));
    // The .vk prefix alone is a valid .vk file, and not a valid .params.
    let vk_len = section_offset(&params, 1);
    assert_eq!(VerifyingKey::from_bytes(&bytes[..vk_len], ReadOptions::default()).unwrap(), params.vk);
    assert!(matches!(VerifyingKey::from_bytes(&bytes, ReadOptions::default()), Err(ParamsError::TrailingBytes { .. })));
}

#[test]
fn wrong_counts_are_rejected() {
    let (params, bytes) = fixture();
    for k in 1..6 {
        let at = section_offset(&params, k);
        for delta in [1i64, -1, 1 << 20] {
            let mut b = bytes.clone();
            let count = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as i64 + delta;
            b[at..at + 4].copy_from_slice(&(count as u32).to_be_bytes());
            let r = Parameters::from_bytes(&b, ReadOptions::default());
            assert!(r.is_err(), "section {k} count {delta:+}: accepted");
        }
    }
}

/// A point on E(Fp) (y² = x³ + 4) that is not in the prime-order subgroup.
fn point_outside_subgroup() -> [u8; 96] {
    let mut x = Fp::ONE;
    loop {
        x += Fp::ONE;
        let rhs = x.square() * x + Fp::from(4u64);
        if let Some(y) = Option::<Fp>::from(rhs.sqrt()) {
            let mut out = [0u8; 96];
            out[..48].copy_from_slice(&x.to_bytes_be());
            out[48..].copy_from_slice(&y.to_bytes_be());
            if let Some(p) = Option::<G1Affine>::from(G1Affine::from_uncompressed_unchecked(&out)) {
                if !bool::from(p.is_torsion_free()) {
                    return out;
                }
            }
        }
    }
}

#[test]
fn bad_points_are_named_with_offset() {
    let (params, bytes) = fixture();
    let l_first = section_offset(&params, 2) + 4;
    let l_third = l_first + 2 * 96;

    // Off the curve: perturb y.
    let mut b = bytes.clone();
    b[l_third + 95] ^= 1;
    match Parameters::from_bytes(&b, ReadOptions::default()) {
        Err(ParamsError::InvalidPoint { section: "l", index: 2, offset, fault: PointFault::NotOnCurve }) => {
            assert_eq!(offset, l_third)
        }
        other => panic!("expected NotOnCurve in l, got {other:?}"),
    }

    // On the curve, outside the subgroup: caught unless checks are off.
    let mut b = bytes.clone();
    b[l_first..l_first + 96].copy_from_slice(&point_outside_subgroup());
    assert!(matches!(
        Parameters::from_bytes(&b, ReadOptions::default()),
        Err(ParamsError::InvalidPoint { section: "l", index: 0, fault: PointFault::NotInSubgroup, .. })
    ));
    assert!(Parameters::from_bytes(&b, ReadOptions::trusted()).is_ok());

    // Compressed-flag and infinity encodings are not valid here.
    let h_first = section_offset(&params, 1) + 4;
    let mut b = bytes.clone();
    b[h_first] |= 0x80;
    assert!(matches!(
        Parameters::from_bytes(&b, ReadOptions::default()),
        Err(ParamsError::InvalidPoint { section: "h", index: 0, fault: PointFault::BadEncoding, .. })
    ));
    let mut b = bytes.clone();
    b[h_first..h_first + 96].fill(0);
    b[h_first] = 0x40;
    assert!(matches!(
        Parameters::from_bytes(&b, ReadOptions::default()),
        Err(ParamsError::InvalidPoint { section: "h", fault: PointFault::Infinity, .. })
    ));
    // A coordinate ≥ p.
    let mut b = bytes.clone();
    b[h_first..h_first + 48].fill(0x1f);
    assert!(Parameters::from_bytes(&b, ReadOptions::default()).is_err());
}

#[test]
fn random_corruption_never_panics() {
    let mut rng = rng("fuzz");
    let (_, bytes) = fixture();
    for _ in 0..300 {
        let mut b = bytes.clone();
        match rng.gen_range(0..3) {
            0 => {
                let n = rng.gen_range(1..8);
                for _ in 0..n {
                    let i = rng.gen_range(0..b.len());
                    b[i] = rng.gen();
                }
            }
            1 => b.truncate(rng.gen_range(0..b.len())),
            _ => {
                let i = rng.gen_range(0..b.len());
                let mut junk = vec![0u8; rng.gen_range(1..200)];
                rng.fill_bytes(&mut junk);
                b.splice(i..i, junk);
            }
        }
        let _ = Parameters::from_bytes(&b, ReadOptions::default());
        let _ = VerifyingKey::from_bytes(&b, ReadOptions::default());
        let _ = Proof::from_bytes(&b[..192.min(b.len())]);
    }
}

#[test]
fn params_for_another_circuit_are_a_named_error() {
    let (params, _) = fixture();
    let other = CircuitSpec::Synthetic { constraints: 301, inputs: 3 }.instance(1);
    let err = groth16::prove(&params, other).unwrap_err().to_string();
    assert!(err.contains("different circuit"), "{err}");
}

/// A param cache holding `bytes` as the `.params` of circuit `id`.
fn cache_with(bytes: &[u8], id: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = ParamCache::new(dir.path()).files(id).params;
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// A fixture's `.params` with L's first point outside the subgroup, in a
/// param cache of its own: what the published-digest rule is tried on.
struct OutsidePoint {
    params: Parameters,
    /// The valid file, and the one with the point outside.
    bytes: Vec<u8>,
    outside: Vec<u8>,
    /// Where that point starts in the file.
    l_first: usize,
    id: &'static str,
    dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl OutsidePoint {
    fn new() -> Self {
        let (params, bytes) = fixture();
        let l_first = section_offset(&params, 2) + 4;
        let mut outside = bytes.clone();
        outside[l_first..l_first + 96].copy_from_slice(&point_outside_subgroup());
        let id = "test-circuit";
        let (dir, path) = cache_with(&outside, id);
        OutsidePoint { params, bytes, outside, l_first, id, dir, path }
    }

    /// The cache with `digest` published for the file's name.
    fn listed(&self, digest: String) -> ParamCache {
        let name = self.path.file_name().unwrap().to_str().unwrap().to_string();
        ParamCache::new(self.dir.path()).with_published(PublishedDigests::new([(name, digest)]))
    }

    /// The cache with no digest published.
    fn unlisted(&self) -> ParamCache {
        ParamCache::new(self.dir.path()).with_published(PublishedDigests::new([]))
    }
}

#[test]
fn params_with_their_published_digest_skip_the_subgroup_checks() {
    let f = OutsidePoint::new();
    let load = |cache: ParamCache| cache.load_params(f.id, ReadOptions::default());

    // Its digest listed under its name: trusted (the point outside the
    // subgroup is not looked for).
    assert!(load(f.listed(file_digest(&f.outside))).is_ok());
    // Not listed, or listed with another digest: every point is checked.
    for cache in [f.unlisted(), f.listed(file_digest(&f.bytes))] {
        match load(cache) {
            Err(FilecoinError::Params {
                source: ParamsError::InvalidPoint { section: "l", index: 0, offset, fault: PointFault::NotInSubgroup },
                ..
            }) if offset == f.l_first => {}
            other => panic!("expected the point outside the subgroup, got {:?}", other.map(|_| ())),
        }
    }
    // A valid file under a stale digest loads, checked point by point.
    std::fs::write(&f.path, &f.bytes).unwrap();
    assert_eq!(load(f.listed(file_digest(&f.outside))).unwrap(), f.params);
    // One byte changed: its digest differs, and the point is refused.
    let mut one = f.bytes.clone();
    one[f.l_first + 50] ^= 1;
    std::fs::write(&f.path, &one).unwrap();
    assert!(matches!(load(f.listed(file_digest(&f.bytes))), Err(FilecoinError::Params { source: ParamsError::InvalidPoint { .. }, .. })));
}

/// A param cache's file read in slices (as the engine loads an SRS
/// straight to the GPUs that keep it) follows the whole read's rule: its
/// published digest trusts it, else every point is checked, with the same
/// errors.
#[test]
fn params_streamed_in_slices_follow_the_published_digest_rule() {
    let f = OutsidePoint::new();
    // The points the sink was handed.
    let stream = |cache: ParamCache| -> Result<usize, ParamsError> {
        let file = cache.params_file(f.id, ReadOptions::default()).expect("the file is there");
        let mut points = 0;
        let mut sink = |s: PointSlice<'_>| {
            points += s.len();
            Ok::<(), std::convert::Infallible>(())
        };
        match file.stream(4099, &mut sink) {
            Ok(_) => Ok(points),
            Err(StreamError::Params(e)) => Err(e),
            Err(StreamError::Sink(never)) => match never {},
        }
    };
    let p = &f.params;
    let all = p.h.len() + p.l.len() + p.a.len() + p.b_g1.len() + p.b_g2.len();
    assert_eq!(stream(f.listed(file_digest(&f.outside))).unwrap(), all, "trusted by its digest");
    for cache in [f.unlisted(), f.listed(file_digest(&f.bytes))] {
        match stream(cache) {
            Err(ParamsError::InvalidPoint { section: "l", index: 0, offset, fault: PointFault::NotInSubgroup }) if offset == f.l_first => {}
            other => panic!("expected the point outside the subgroup, got {other:?}"),
        }
    }
    // A valid file under a stale digest: checked point by point, each
    // point handed over once.
    std::fs::write(&f.path, &f.bytes).unwrap();
    assert_eq!(stream(f.listed(file_digest(&f.outside))).unwrap(), all);
    std::fs::remove_file(&f.path).unwrap();
    assert!(f.unlisted().params_file(f.id, ReadOptions::default()).is_none(), "no file: none to stream");
}

#[test]
fn our_digest_is_the_one_filecoin_proofs_checks() {
    use cuzk_core::filecoin::storage_proofs_core::parameter_cache::{verify_production_entry, ParameterData};
    use std::collections::BTreeMap;
    static LIST: std::sync::OnceLock<BTreeMap<String, ParameterData>> = std::sync::OnceLock::new();
    fn selector(name: &str) -> Option<&'static ParameterData> {
        LIST.get().unwrap().get(name)
    }
    let (_, bytes) = fixture();
    let (_dir, path) = cache_with(&bytes, "digest-check");
    let data = |digest: String| ParameterData { cid: String::new(), digest, sector_size: 0 };
    let mut other = file_digest(&bytes);
    other.replace_range(0..1, if other.starts_with('0') { "1" } else { "0" });
    LIST.set(BTreeMap::from([("ours".into(), data(file_digest(&bytes))), ("other".into(), data(other))])).unwrap();
    assert!(verify_production_entry(&path, "ours".into(), selector).unwrap());
    assert!(verify_production_entry(&path, "other".into(), selector).is_err());
    // BLAKE2b-512 of nothing, truncated as the list does.
    assert_eq!(file_digest(&[]), "786a02f742015903c6c6fd852552d272");
}

#[test]
fn the_subgroup_check_after_decoding_names_the_point_as_decoding_does() {
    let (params, bytes) = fixture();
    let g1_points = [("vk.alpha_g1", 0), ("vk.delta_g1", 96 * 2 + 192 * 2)]
        .into_iter()
        .chain(["vk.ic", "h", "l", "a", "b_g1"].into_iter().enumerate().map(|(k, s)| (s, section_offset(&params, k) + 4 + 96)));
    for (section, at) in g1_points {
        let mut b = bytes.clone();
        b[at..at + 96].copy_from_slice(&point_outside_subgroup());
        let decoding = Parameters::from_bytes(&b, ReadOptions::default()).expect_err("refused");
        let after = Parameters::from_bytes(&b, ReadOptions::trusted()).unwrap().check_subgroups().expect_err("refused");
        assert!(matches!(decoding, ParamsError::InvalidPoint { section: s, .. } if s == section), "{decoding}");
        assert_eq!(after.to_string(), decoding.to_string());
    }
    assert!(params.check_subgroups().is_ok());
}

#[test]
fn the_self_check_key_comes_from_the_params_head_without_a_vk() {
    let (params, bytes) = fixture();
    let (dir, path) = cache_with(&bytes, "head");
    let cache = ParamCache::new(dir.path());
    let head = VerifyingKey::read_params_head(&path, ReadOptions::default()).unwrap();
    assert_eq!(head, params.vk);
    assert!(cache.check_files("head", true, true).is_ok());
    assert_eq!(cache.load_vk("head").unwrap().path, path);
    // With a .vk, that file is used, and holds the same key.
    let vk = cache.files("head").vk;
    params.vk.write_file(&vk).unwrap();
    assert_eq!(VerifyingKey::read_file(&vk, ReadOptions::default()).unwrap(), head);
    assert_eq!(cache.load_vk("head").unwrap().path, vk);
    // Neither file: the error names the .vk.
    std::fs::remove_file(&vk).unwrap();
    std::fs::remove_file(&path).unwrap();
    let e = cache.check_files("head", false, true).expect_err("nothing to check with").to_string();
    assert!(e.contains("head.vk"), "{e}");
}
