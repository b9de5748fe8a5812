//! Filecoin end to end with our own parameters, through the script the
//! full-size H200 run uses (`build/h200/fil-e2e.sh`), at 2 KiB on the CPU:
//! `cuzk filecoin-workload` → `cuzk filecoin-setup` with a known toxic seed
//! into a fresh param cache (the R1CS saved where the engine loads it) →
//! the daemon on that cache → `cuzk single` → `cuzk filecoin-verify`
//! (filecoin-proofs' own verifier with our `.vk`) accepts the proof, and
//! refuses it with one byte changed.
//!
//! CI runs the fresh setup for WindowPoSt (seconds) and proves PoRep with
//! the shared test parameters (our setup too, made once for every test
//! binary): PoRep's 2 KiB circuit has 2.7 M constraints and its setup takes
//! minutes on CI's two cores. Every kind with a fresh setup is ignored (run
//! it by hand).

use cuzk_core::filecoin::{ProofKind, ProofType};
use std::path::Path;
use std::process::{Command, Output};

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Runs the script for `kind` at 2 KiB in `dir`; `params`: a given param
/// cache instead of a fresh setup. Returns the summary.
fn script(kind: &str, dir: &Path, params: Option<&Path>) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../build/h200/fil-e2e.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script).env("CUZK", env!("CARGO_BIN_EXE_cuzk")).env("KIND", kind).env("SIZE", "2KiB").env("DIR", dir);
    cmd.env("BUDGET", "6GiB").env("TOXIC_SEED", "5").env("KEEP_PARAMS", "1");
    if let Some(p) = params {
        cmd.env("PARAMS", p);
    }
    let t = std::time::Instant::now();
    let o = cmd.output().expect("run bash");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap_or_default();
    assert!(o.status.success(), "{kind}: {}", text(&o));
    eprintln!("{kind}: {:.1} s\n{summary}", t.elapsed().as_secs_f64());
    assert!(summary.contains("PASSED"), "{summary}");
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap();
    assert!(!log.contains("panicked"), "{log}");
    summary
}

fn verify(dir: &Path, params: &Path, proof: &Path) -> Output {
    let w = dir.join("workload");
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(["filecoin-verify", "--workload", &w.display().to_string(), "--proof", &proof.display().to_string()])
        .args(["--param-cache", &params.display().to_string()])
        .output()
        .unwrap()
}

/// The proof with one byte changed: filecoin-proofs' verifier refuses it (exit 1).
fn tampered_is_refused(dir: &Path, params: &Path) {
    let mut bytes = std::fs::read(dir.join("proof.bin")).unwrap();
    bytes[7] ^= 1;
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, &bytes).unwrap();
    let o = verify(dir, params, &bad);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("verify_"), "{}", text(&o));
}

/// A fresh setup: the engine loads the R1CS setup saved, and the verifier
/// accepts the proof with the new `.vk`.
fn with_fresh_setup(kind: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    script(kind, dir, None);
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap();
    assert!(log.contains("path=pce-loaded"), "{kind}: the engine did not load the R1CS setup saved:\n{log}");
    tampered_is_refused(dir, &dir.join("params"));
}

#[test]
fn window_post_with_a_fresh_setup() {
    with_fresh_setup("window");
}

#[test]
#[ignore = "minutes of CPU setup on CI's 2 cores (PoRep 2 KiB: 2.7 M constraints, ~6 min; WinningPoSt ~1 min); run by hand"]
fn every_kind_with_a_fresh_setup() {
    for kind in ["porep", "winning", "window", "snap"] {
        with_fresh_setup(kind);
    }
}

#[test]
fn porep_with_the_shared_test_params() {
    let files = cuzk_tests::fil::ensure_params(ProofType::current(ProofKind::PorepSealCommit, 2048).unwrap());
    let cache = files.params.parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let summary = script("porep", tmp.path(), Some(&cache));
    assert!(summary.contains("| setup | given"), "{summary}");
    tampered_is_refused(tmp.path(), &cache);
}

#[test]
fn filecoin_verify_names_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workload")).unwrap();
    std::fs::write(dir.join("proof.bin"), [0u8; 192]).unwrap();
    let o = verify(dir, &dir.join("params"), &dir.join("proof.bin"));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("meta.json"), "{}", text(&o));
    let meta = r#"{"kind": "winning", "registered_proof_number": 0}"#;
    std::fs::write(dir.join("workload/meta.json"), meta).unwrap();
    let o = verify(dir, &dir.join("params"), &dir.join("proof.bin"));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains(".vk is missing"), "{}", text(&o));
}
