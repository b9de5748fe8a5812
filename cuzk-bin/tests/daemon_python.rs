//! The daemon driven by a second, independent client: Python grpcio with
//! stubs generated from our .proto (tests/py/daemon_client.py), over a unix
//! socket and over TCP. The proofs it gets are verified here.
//!
//! Python with grpcio and grpcio-tools comes from $CUZK_PYTHON,
//! build/install-py-grpc.sh (a venv in build/.venv) or `python3` on PATH.
//! Without it the test writes SKIPPED straight to stderr (the test harness
//! shows it, unlike captured output), except under CI (env CI set), where
//! it fails.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let candidates =
        [std::env::var_os("CUZK_PYTHON").map(PathBuf::from), Some(root.join("build/.venv/bin/python")), Some(PathBuf::from("python3"))];
    candidates
        .into_iter()
        .flatten()
        .find(|p| Command::new(p).args(["-c", "import grpc, grpc_tools"]).output().is_ok_and(|o| o.status.success()))
}

fn run_python_client(listen: Listen) {
    let Some(py) = python() else {
        let msg = "python with grpcio + grpcio-tools not found (run build/install-py-grpc.sh or set CUZK_PYTHON)";
        if std::env::var_os("CI").is_some() {
            panic!("{msg}: CI must run the Python client test");
        }
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED daemon_python: {msg}");
        return;
    };
    let (d, pvk) = DaemonProc::start(listen, "");
    let proto_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/daemon_client.py");
    let gen = d.dir.path().join("py-gen");
    let o = Command::new(&py).arg(&script).arg(&proto_dir).arg(&gen).arg(&d.addr).arg(TINY).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "python client failed:\n{stdout}\n{}\ndaemon log:\n{}", String::from_utf8_lossy(&o.stderr), d.log());
    let report: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let proofs = report["proofs"].as_array().unwrap();
    assert_eq!(proofs.len(), 8);
    for p in proofs {
        let hex = p["proof_hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        assert_valid(&pvk, p["circuit"].as_str().unwrap(), p["partitions"].as_u64().unwrap() as usize, p["seed"].as_u64().unwrap(), &bytes);
    }
    d.stop();
}

#[test]
fn python_client_over_unix_socket() {
    run_python_client(Listen::Unix);
}

#[test]
fn python_client_over_tcp() {
    run_python_client(Listen::Tcp);
}
