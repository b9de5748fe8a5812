//! The real `cuzk-daemon` binary driven through the gRPC client generated
//! from our .proto: every RPC, bad input, idempotency, cancellation, await
//! timeouts, concurrency, and shutdown under load.

mod common;

use common::*;
use cuzk_bin::proto as pb;
use grpcio::RpcStatusCode;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

fn status_of(r: &pb::AwaitProofResponse) -> pb::await_proof_response::Status {
    pb::await_proof_response::Status::from_i32(r.status).unwrap()
}

#[test]
fn every_rpc_over_a_unix_socket() {
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let sock = d.socket.clone().unwrap();
    assert_eq!(
        std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777,
        0o660,
        "socket: owner and group read/write (the default daemon.socket_mode)"
    );
    let c = d.client();
    let id = "builtin-synthetic-1024-4";

    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert!(!s.gpus.is_empty(), "a device (the CPU backend's) is listed");
    let kinds: Vec<&str> = s.queues.iter().map(|q| q.proof_kind.as_str()).collect();
    for kind in ["porep-c2", "snap-update", "window-post", "winning-post"] {
        assert!(kinds.contains(&kind), "the existing daemon's proof_kind {kind:?} in {kinds:?}");
    }
    assert!(s.pinned_memory_limit_bytes > 0);

    let p = c.preload_srs(&pb::PreloadSrsRequest { circuit_id: id.into() }).unwrap();
    assert!(!p.already_loaded);
    assert!(c.preload_srs(&pb::PreloadSrsRequest { circuit_id: id.into() }).unwrap().already_loaded);
    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert!(s.loaded_srs.iter().any(|e| e.circuit_id == id && e.size_bytes > 0), "{:?}", s.loaded_srs);

    let sub = c.submit_proof(&builtin(TINY, 2, 10)).unwrap();
    assert!(is_uuid(&sub.job_id), "a request without request_id gets a UUID: {}", sub.job_id);
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: sub.job_id.clone(), timeout_ms: 0 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Completed, "{}", r.error_message);
    assert_eq!(r.job_id, sub.job_id);
    assert!(r.total_ms >= r.queue_wait_ms);
    assert_valid(&pvk, TINY, 2, 10, &r.proof);
    // A finished job stays awaitable.
    let again = c.await_proof(&pb::AwaitProofRequest { job_id: sub.job_id.clone(), timeout_ms: 5 }).unwrap();
    assert_eq!(again.proof, r.proof);

    let pr = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 20)) }).unwrap().result.unwrap();
    assert_eq!(pr.status, completed(), "{}", pr.error_message);
    assert_valid(&pvk, TINY, 1, 20, &pr.proof);

    // Cancelling a finished job: nothing to cancel.
    assert!(!c.cancel_proof(&pb::CancelProofRequest { job_id: sub.job_id.clone() }).unwrap().was_running);

    let m = c.get_metrics(&pb::GetMetricsRequest {}).unwrap().prometheus_text;
    assert!(m.contains("cuzk_jobs_completed_total 2"), "{m}");
    assert!(m.contains("cuzk_rpc_requests_total{method=\"Prove\",code=\"OK\"} 1"), "{m}");
    // Prometheus text, with the existing daemon's metric names beside ours.
    for line in m.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not name value: {line:?}"));
        assert!(value.parse::<f64>().is_ok() && name.starts_with("cuzk_"), "{line:?}");
    }
    for want in
        ["cuzk_proofs_completed_total 2", "cuzk_proofs_failed_total 0", "cuzk_queue_depth 0", "cuzk_running_jobs 0", "cuzk_gpu_workers 2"]
    {
        assert!(m.lines().any(|l| l == want), "no {want:?} in\n{m}");
    }

    for (kind, n) in [("builtin", 2), ("porep_c2", 0)] {
        for want in [
            format!("cuzk_proofs_completed{{proof_kind=\"{kind}\"}} {n}"),
            format!("cuzk_proof_duration_seconds_count{{proof_kind=\"{kind}\"}} {n}"),
        ] {
            assert!(m.lines().any(|l| l == want), "no {want:?} in\n{m}");
        }
    }
    assert!(m.contains("# TYPE cuzk_proof_duration_seconds summary\n"), "{m}");
    assert!(m.contains("cuzk_proofs_failed{proof_kind=\"winning_post\"} 0\n"), "{m}");

    let (code, head, body) = http_get_with_headers(d.status_addr.as_deref().unwrap(), "/status");
    assert_eq!(code, 200);
    assert!(head.lines().any(|h| h.eq_ignore_ascii_case("Access-Control-Allow-Origin: *")), "{head}");
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_upstream_status_schema(&j);
    assert_eq!(j["counters"]["total_completed"], 2);
    assert_eq!(j["counters"]["completed_by_kind"]["builtin"], 2);
    let recent = j["pipelines"].as_array().unwrap();
    assert_eq!(recent.len(), 2, "both jobs finished within the last 30 s: {j}");
    let first = recent.iter().find(|p| p["job_id"] == sub.job_id.as_str()).unwrap_or_else(|| panic!("{j}"));
    assert_eq!((first["total_partitions"].as_u64(), first["partitions_done"].as_u64()), (Some(2), Some(2)), "{first}");
    assert!(
        first["partitions"].as_array().unwrap().iter().all(|p| p["state"] == "done" && p["synth_ms"].is_u64() && p["gpu_ms"].is_u64()),
        "{first}"
    );
    assert_eq!(j["gpu_workers"].as_array().unwrap().len(), 2);
    assert!(j["allocations"]["srs"].as_array().unwrap().iter().any(|e| e["circuit_id"] == id && e["bytes"].as_u64() > Some(0)), "{j}");
    assert!(j["memory"]["total_bytes"].as_u64().unwrap() > 0);
    // Ours alongside.
    assert!(j["stages"]["synthesis"]["workers"].as_array().is_some_and(|w| !w.is_empty()), "{j}");
    assert!(j["stages"]["gpu"]["workers"].as_array().is_some_and(|w| !w.is_empty()), "{j}");
    assert_eq!(j["counters"]["jobs_completed"], 2);
    assert!(j["memory"]["budget_bytes"].as_u64().unwrap() > 0);
    assert!(j["srs"].as_array().unwrap().iter().any(|e| e["circuit_id"] == id));
    let (code, body) = d.http_get("/metrics");
    assert_eq!(code, 200);
    assert!(body.contains("# TYPE cuzk_jobs_completed_total counter"));
    // VRAM budgets of GPUs only, in bytes a card has: none on the CPU
    // backend, whose one device has no VRAM (not u64::MAX, 1.8e19).
    let budgets: Vec<f64> = body
        .lines()
        .filter_map(|l| l.strip_prefix("cuzk_vram_budget_bytes{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    let cpu = j["daemon"]["backend"] == "cpu";
    assert!(if cpu { budgets.is_empty() } else { !budgets.is_empty() && budgets.iter().all(|&b| b > 0.0 && b < 1e14) }, "{body}");
    for g in j["gpus"].as_array().unwrap() {
        assert!(g["vram_budget_bytes"].as_u64().is_some_and(|b| b < 1 << 47 && (b > 0) != cpu), "{g}");
    }
    assert_eq!(d.http_get("/nope").0, 404);

    let e = c.evict_srs(&pb::EvictSrsRequest { circuit_id: id.into() }).unwrap();
    assert!(e.was_loaded && e.freed_bytes > 0, "{e:?}");
    assert!(!c.evict_srs(&pb::EvictSrsRequest { circuit_id: id.into() }).unwrap().was_loaded);
    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    assert!(!s.loaded_srs.iter().any(|e| e.circuit_id == id));
    assert_eq!(s.total_proofs_completed, 2);

    d.stop();
    assert!(!sock.exists());
}

/// 8-4-4-4-12 lowercase hex, version 4, RFC 4122 variant.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        && groups[2].starts_with('4')
        && groups[3].starts_with(['8', '9', 'a', 'b'])
}

/// Every field of the existing daemon's `GET /status`, with its JSON type
/// (its StatusSnapshot; null where it is an Option).
fn assert_upstream_status_schema(j: &serde_json::Value) {
    use serde_json::Value;
    let num = |v: &Value| v.is_number();
    let opt_num = |v: &Value| v.is_number() || v.is_null();
    let check = |obj: &Value, fields: &[(&str, &dyn Fn(&Value) -> bool)], what: &str| {
        for (f, ok) in fields {
            assert!(ok(&obj[f]), "{what}.{f} = {} in {obj}", obj[f]);
        }
    };
    check(
        j,
        &[
            ("uptime_secs", &num),
            ("memory", &Value::is_object),
            ("synthesis", &Value::is_object),
            ("pipelines", &Value::is_array),
            ("gpu_workers", &Value::is_array),
            ("allocations", &Value::is_object),
            ("counters", &Value::is_object),
            ("buffers", &Value::is_object),
        ],
        "status",
    );
    check(&j["memory"], &[("total_bytes", &num), ("used_bytes", &num), ("available_bytes", &num)], "memory");
    check(&j["synthesis"], &[("max_concurrent", &num), ("active", &num)], "synthesis");
    for p in j["pipelines"].as_array().unwrap() {
        check(
            p,
            &[
                ("job_id", &Value::is_string),
                ("proof_kind", &Value::is_string),
                ("started_secs_ago", &num),
                ("total_partitions", &num),
                ("partitions_done", &num),
                ("partitions", &Value::is_array),
            ],
            "pipelines[]",
        );
        for q in p["partitions"].as_array().unwrap() {
            check(q, &[("index", &num), ("state", &Value::is_string), ("synth_ms", &opt_num), ("gpu_ms", &opt_num)], "partitions[]");
            assert!(["pending", "synthesizing", "synth_done", "gpu", "done", "failed"].contains(&q["state"].as_str().unwrap()), "{q}");
        }
    }
    for w in j["gpu_workers"].as_array().unwrap() {
        let opt_str = |v: &Value| v.is_string() || v.is_null();
        check(
            w,
            &[
                ("worker_id", &num),
                ("gpu_ordinal", &num),
                ("state", &Value::is_string),
                ("current_job", &opt_str),
                ("current_partition", &opt_num),
                ("busy_secs", &opt_num),
            ],
            "gpu_workers[]",
        );
        assert!(["idle", "proving"].contains(&w["state"].as_str().unwrap()), "{w}");
    }
    for kind in ["srs", "pce"] {
        for e in j["allocations"][kind].as_array().unwrap_or_else(|| panic!("allocations.{kind} in {j}")) {
            check(
                e,
                &[("circuit_id", &Value::is_string), ("bytes", &num), ("last_used_secs_ago", &num), ("evictable", &Value::is_boolean)],
                kind,
            );
        }
    }
    check(
        &j["counters"],
        &[
            ("total_completed", &num),
            ("total_failed", &num),
            ("completed_by_kind", &Value::is_object),
            ("failed_by_kind", &Value::is_object),
            ("queue_depth", &num),
        ],
        "counters",
    );
    check(
        &j["buffers"],
        &[
            ("synth_in_flight", &num),
            ("provers_in_flight", &num),
            ("aux_in_flight", &num),
            ("shells_in_flight", &num),
            ("pending_handles", &num),
        ],
        "buffers",
    );
}

#[test]
fn a_status_port_in_use_leaves_grpc_serving() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let pvk = write_params(dir.path(), TINY);
    let path = dir.path().to_path_buf();
    let d = DaemonProc::start_with(dir, Listen::Tcp, |l| {
        config_text(&path, l, "").replace("status_listen = \"127.0.0.1:0\"", &format!("status_listen = \"127.0.0.1:{port}\""))
    });
    assert!(d.status_addr.is_none());
    let r = d.client().prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 7)) }).unwrap().result.unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    assert_valid(&pvk, TINY, 1, 7, &r.proof);
    let log = d.stop();
    assert!(log.contains(&format!("cannot serve HTTP status on \"127.0.0.1:{port}\"")) && log.contains("ERROR"), "{log}");
}

#[test]
fn bad_requests_get_clear_errors_over_tcp() {
    let (d, pvk) = DaemonProc::start(Listen::Tcp, "");
    assert!(d.addr.starts_with("127.0.0.1:") && !d.addr.ends_with(":0"), "{}", d.addr);
    let c = d.client();
    // A job in flight while bad requests arrive: it must not be lost.
    let long = c.submit_proof(&builtin(TINY, 16, 500)).unwrap();

    let expect = |r: pb::SubmitProofRequest, code: RpcStatusCode, needle: &str| {
        let (got, msg) = rpc_error(c.submit_proof(&r));
        assert_eq!(got, code, "{msg}");
        assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
        // Prove reports the same.
        let (got, _) = rpc_error(c.prove(&pb::ProveRequest { submit: Some(r) }));
        assert_eq!(got, code);
    };
    let porep = |vanilla: &[u8], size: u64, reg: u64| pb::SubmitProofRequest {
        proof_kind: pb::ProofKind::PorepSealCommit as i32,
        vanilla_proof: vanilla.to_vec(),
        sector_size: size,
        registered_proof: reg,
        ..Default::default()
    };
    let inv = RpcStatusCode::INVALID_ARGUMENT;
    expect(pb::SubmitProofRequest { proof_kind: 9, ..Default::default() }, inv, "proof_kind 9 is not a known ProofKind");
    expect(pb::SubmitProofRequest::default(), inv, "proof_kind is unspecified");
    expect(porep(b"", 2048, 0), inv, "vanilla_proof is empty");
    expect(porep(b"{\"SectorNum\": 1, \"Phase1Out\": \"@@@", 2048, 0), inv, "vanilla_proof (the PoRep envelope): malformed JSON");
    expect(porep(br#"{"SectorNum":1,"Phase1Out":"aGVsbG8=","SectorSize":2048}"#, 2048, 0), inv, "SealCommitPhase1Output: malformed JSON");
    let c1 = br#"{"SectorNum":1,"Phase1Out":"eyJhIjoxfQ==","SectorSize":2048}"#;
    let wpost = pb::SubmitProofRequest {
        proof_kind: 3,
        registered_proof: 13,
        vanilla_proofs: vec![vec![]],
        randomness: vec![0; 32],
        ..Default::default()
    };
    expect(wpost, inv, "vanilla_proofs[0] is empty");
    let wpost = pb::SubmitProofRequest {
        proof_kind: 3,
        registered_proof: 99,
        vanilla_proofs: vec![vec![1]],
        randomness: vec![0; 32],
        ..Default::default()
    };
    expect(wpost, inv, "unknown registered proof 99 for PoSt");
    let wpost = pb::SubmitProofRequest { proof_kind: 3, registered_proof: 3, vanilla_proofs: vec![vec![1]], ..Default::default() };
    expect(wpost, inv, "is not a WindowPoSt proof");
    expect(builtin("synthetic:2^30", 1, 0), inv, "larger than built-in circuits may be");
    expect(builtin("nonsense:3", 1, 0), inv, "unknown circuit");

    // Unknown and malformed job ids.
    let (code, msg) = rpc_error(c.await_proof(&pb::AwaitProofRequest { job_id: "job-987654".into(), timeout_ms: 0 }));
    assert_eq!(code, RpcStatusCode::NOT_FOUND);
    assert!(msg.contains("unknown job job-987654"), "{msg}");
    let (code, msg) = rpc_error(c.cancel_proof(&pb::CancelProofRequest { job_id: "banana".into() }));
    assert_eq!(code, inv);
    assert!(msg.contains("not a job id"), "{msg}");
    let (code, msg) = rpc_error(c.preload_srs(&pb::PreloadSrsRequest { circuit_id: "no-such-circuit".into() }));
    assert_eq!(code, RpcStatusCode::FAILED_PRECONDITION);
    assert!(msg.contains("unknown circuit id"), "{msg}");

    // Over the daemon's 256 MiB message limit (this client would send it):
    // refused by the daemon, which logs and counts it.
    let big = pb::SubmitProofRequest { proof_kind: 1, vanilla_proof: vec![b' '; (256 << 20) + 1024], ..Default::default() };
    let (code, msg) = rpc_error(d.client_with_send_limit(512 << 20).submit_proof(&big));
    assert_eq!(code, RpcStatusCode::RESOURCE_EXHAUSTED, "{msg}");
    assert!(msg.contains("over the daemon's limit of 256 MiB"), "{msg}");
    drop(big);
    let metrics = c.get_metrics(&Default::default()).unwrap().prometheus_text;
    assert!(metrics.contains("cuzk_rpc_requests_total{method=\"SubmitProof\",code=\"RESOURCE_EXHAUSTED\"} 1"), "{metrics}");

    // Well-formed JSON that is not a C1 output: the engine's decoder names it.
    expect(porep(c1, 2048, 5), inv, "SealCommitPhase1Output");

    // The job submitted first completes and is valid; the daemon still serves.
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: long.job_id, timeout_ms: 0 }).unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    assert_valid(&pvk, TINY, 16, 500, &r.proof);
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 501)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 501, &r.proof);
    assert_eq!(r.error_code, 0, "a completed job has no error code");
    let log = d.log();
    assert!(!log.contains("panicked"), "{log}");
    d.stop();
}

/// A job that fails after it was taken is FAILED with its message, as
/// Curio reads it, and says its kind of failure in `error_code`: here
/// unusable parameters (a built-in circuit's `.params` that does not
/// read), the code a PreloadSRS of them fails with too.
#[test]
fn a_failed_job_says_its_kind_of_failure() {
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let (circuit, id) = ("synthetic:64:2", "builtin-synthetic-64-2");
    let file = d.dir.path().join(format!("{id}.params"));
    std::fs::write(&file, b"not a parameter file").unwrap();
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(circuit, 1, 1)) }).unwrap().result.unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Failed, "{}", r.error_message);
    assert_eq!(r.error_code, i32::from(RpcStatusCode::FAILED_PRECONDITION), "{}", r.error_message);
    let names_the_file = |m: &str| m.contains(&format!("cannot load SRS {id}")) && m.contains(&file.display().to_string());
    assert!(names_the_file(&r.error_message), "{}", r.error_message);
    let (code, msg) = rpc_error(c.preload_srs(&pb::PreloadSrsRequest { circuit_id: id.into() }));
    assert_eq!(code, RpcStatusCode::FAILED_PRECONDITION, "{msg}");
    assert!(names_the_file(&msg), "{msg}");
    // The log line of the failed job names its kind.
    d.wait_log("error_kind=bad_params");
    // Other circuits still prove.
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 2)) }).unwrap().result.unwrap();
    assert_eq!((r.status, r.error_code), (completed(), 0), "{}", r.error_message);
    assert_valid(&pvk, TINY, 1, 2, &r.proof);
    d.stop();
}

#[test]
fn request_id_is_an_idempotency_key() {
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let mut req = builtin(TINY, 24, 40);
    req.request_id = "porep-1000-7".into();
    let a = c.submit_proof(&req).unwrap();
    let b = c.submit_proof(&req).unwrap();
    assert_eq!(a.job_id, b.job_id, "same request id while the first is live");
    assert_eq!(a.job_id, "porep-1000-7", "the job id is the request id");
    d.wait_log("rpc submit request_id=\"porep-1000-7\" proof_kind=PROOF_KIND_UNSPECIFIED input_bytes=");
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: a.job_id.clone(), timeout_ms: 0 }).unwrap();
    assert_eq!((status_of(&r), r.job_id.as_str()), (pb::await_proof_response::Status::Completed, "porep-1000-7"));
    assert_valid(&pvk, TINY, 24, 40, &r.proof);
    // Exact matching: a request id with a trailing space is another id.
    let (code, _) = rpc_error(c.await_proof(&pb::AwaitProofRequest { job_id: "porep-1000-7 ".into(), timeout_ms: 0 }));
    assert_eq!(code, RpcStatusCode::INVALID_ARGUMENT);
    let mut queued = builtin("synthetic:2^14:4", 64, 42);
    queued.request_id = "snap-1000-9".into();
    assert_eq!(c.submit_proof(&queued).unwrap().job_id, "snap-1000-9");
    c.cancel_proof(&pb::CancelProofRequest { job_id: "snap-1000-9".into() }).unwrap();
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: "snap-1000-9".into(), timeout_ms: 0 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled);
    let r = c.prove(&pb::ProveRequest { submit: Some(req.clone()) }).unwrap().result.unwrap();
    assert_eq!(r.job_id, a.job_id);
    assert_valid(&pvk, TINY, 24, 40, &r.proof);
    let other = c.submit_proof(&builtin(TINY, 1, 41)).unwrap();
    assert_ne!(other.job_id, a.job_id);
    // Counted once every job has ended (a count read before `other` ended
    // depended on whether it had): `a` once, the second submission joined
    // it while it lived (logged as resubmitted, not run again); the Prove
    // after it completed ran it again (a request id is a key while its job
    // lives); and `other`. The cancelled one none.
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: other.job_id, timeout_ms: 0 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Completed, "{}", r.error_message);
    let s = c.get_status(&pb::GetStatusRequest {}).unwrap();
    let log = d.log();
    let resubmitted = log.lines().filter(|l| l.contains("job resubmitted") && l.contains("request_id=\"porep-1000-7\"")).count();
    assert_eq!(resubmitted, 1, "{log}");
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (3, 0));
    d.stop();
}

#[test]
fn cancellation_and_await_timeout() {
    // No params file for this circuit: the daemon makes a random SRS.
    let (d, _) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let big = "synthetic:2^14:4";
    let a = c.submit_proof(&builtin(big, 64, 1)).unwrap();
    let b = c.submit_proof(&builtin(big, 1, 2)).unwrap();
    assert!(b.queue_position >= 1, "the second job waits behind the first: {b:?}");

    let t = std::time::Instant::now();
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: b.job_id.clone(), timeout_ms: 200 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Timeout);
    assert!(t.elapsed() >= Duration::from_millis(190) && t.elapsed() < Duration::from_secs(10));

    let cb = c.cancel_proof(&pb::CancelProofRequest { job_id: b.job_id.clone() }).unwrap();
    assert!(!cb.was_running, "b was still queued");
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: b.job_id.clone(), timeout_ms: 0 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled);

    // Wait until a is running, then cancel it.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while c.get_status(&pb::GetStatusRequest {}).unwrap().queues.iter().all(|q| q.in_progress == 0) {
        assert!(std::time::Instant::now() < deadline, "job a never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ca = c.cancel_proof(&pb::CancelProofRequest { job_id: a.job_id.clone() }).unwrap();
    assert!(ca.was_running);
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: a.job_id.clone(), timeout_ms: 0 }).unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled);
    let m = c.get_metrics(&pb::GetMetricsRequest {}).unwrap().prometheus_text;
    assert!(m.contains("cuzk_jobs_cancelled_total 2"), "{m}");
    d.stop();
}

#[test]
fn twenty_clients_five_proofs_each() {
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let addr = d.addr.clone();
    let results: Vec<(u64, pb::AwaitProofResponse)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..20u64)
            .map(|client| {
                let addr = addr.clone();
                s.spawn(move || {
                    let c = cuzk_bin::client::connect(&addr).unwrap();
                    (0..5u64)
                        .map(|k| {
                            let seed = 1000 + client * 10 + k;
                            let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, seed)) }).unwrap();
                            (seed, r.result.unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.len(), 100);
    let mut ids: Vec<&str> = results.iter().map(|(_, r)| r.job_id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 100, "every proof its own job");
    for (seed, r) in &results {
        assert_eq!(r.status, completed(), "{}", r.error_message);
        assert_valid(&pvk, TINY, 1, *seed, &r.proof);
    }
    let s = d.client().get_status(&pb::GetStatusRequest {}).unwrap();
    assert_eq!((s.total_proofs_completed, s.total_proofs_failed), (100, 0));
    d.stop();
}

/// SIGTERM while clients are proving: with shutdown = "drain" every call
/// that got in completes with a valid proof; later ones are refused with
/// UNAVAILABLE; nothing is lost; the process exits 0 and removes its socket.
#[test]
fn sigterm_during_load_drains() {
    let (mut d, pvk) = DaemonProc::start(Listen::Unix, "shutdown = \"drain\"");
    let addr = d.addr.clone();
    let outcomes = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8u64)
            .map(|i| {
                let addr = addr.clone();
                s.spawn(move || {
                    let c = cuzk_bin::client::connect(&addr).unwrap();
                    let mut out = Vec::new();
                    // Prove until the daemon refuses (it will: SIGTERM).
                    for k in 0..1000u64 {
                        let seed = 5000 + i * 1000 + k;
                        match c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 4, seed)) }) {
                            Ok(r) => out.push((seed, Ok(r.result.unwrap()))),
                            Err(e) => {
                                out.push((seed, Err(e)));
                                break;
                            }
                        }
                    }
                    out
                })
            })
            .collect();
        // Some proofs made, then the signal (their calls drain: done > 0).
        d.wait_log("job completed job=");
        d.signal(libc::SIGTERM);
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    let (mut done, mut refused) = (0, 0);
    for (seed, o) in outcomes {
        match o {
            Ok(r) => {
                assert_eq!(r.status, completed(), "drained job {} ended {}: {}", r.job_id, r.status, r.error_message);
                assert_valid(&pvk, TINY, 4, seed, &r.proof);
                done += 1;
            }
            // Refused: by the daemon (UNAVAILABLE, shutting down), or by
            // gRPC for a call that arrived as the server closed (CANCELLED,
            // before any handler ran). The log check below shows no job was lost.
            Err(grpcio::Error::RpcFailure(st)) => {
                assert!(matches!(st.code(), RpcStatusCode::UNAVAILABLE | RpcStatusCode::CANCELLED), "{:?} {}", st.code(), st.message());
                refused += 1;
            }
            Err(e) => panic!("unexpected client error {e}"),
        }
    }
    assert!(done > 0, "some proofs were made before the signal");
    assert!(refused > 0, "the signal came before the clients were done");
    let status = d.wait(Duration::from_secs(60));
    assert!(status.success(), "exit {status:?}; log:\n{}", d.log());
    assert!(!d.socket.as_ref().unwrap().exists());
    // Every job the daemon accepted was proved: none failed, none cancelled.
    let log = d.log();
    let jobs = |event: &str| -> Vec<String> {
        let mut v: Vec<String> = log.lines().filter_map(|l| l.split_once(event)?.1.split_whitespace().next().map(str::to_string)).collect();
        v.sort();
        v
    };
    // A call that came as the shutdown began may be logged as submitted
    // and then refused (its caller was answered UNAVAILABLE).
    let refused_at_submit = jobs("job refused job=");
    let mut accepted = jobs("job submitted job=");
    accepted.retain(|j| !refused_at_submit.contains(j));
    assert!(accepted.len() >= done, "{log}");
    assert_eq!(accepted, jobs("job completed job="), "accepted jobs that did not complete:\n{log}");
    assert!(!log.contains("job failed") && !log.contains("job cancelled"), "{log}");
}

/// A call awaiting `job_id` on a thread, returned once the daemon has it.
fn await_in_flight(d: &DaemonProc, job_id: String) -> std::thread::JoinHandle<grpcio::Result<pb::AwaitProofResponse>> {
    let c = d.client();
    let needle = format!("rpc AwaitProof job={job_id} waiting");
    let waiter = std::thread::spawn(move || c.await_proof(&pb::AwaitProofRequest { job_id, timeout_ms: 0 }));
    d.wait_log(&needle);
    waiter
}

/// With shutdown = "cancel", in-flight calls answer CANCELLED (or were done).
#[test]
fn sigterm_with_cancel_mode() {
    let (mut d, _) = DaemonProc::start_logging_awaits(Listen::Tcp, "shutdown = \"cancel\"");
    let c = d.client();
    let big = "synthetic:2^14:4";
    let a = c.submit_proof(&builtin(big, 64, 1)).unwrap();
    let waiter = await_in_flight(&d, a.job_id);
    d.signal(libc::SIGTERM);
    let r = waiter.join().unwrap().unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled, "{}", r.error_message);
    assert!(d.wait(Duration::from_secs(60)).success(), "{}", d.log());
}

/// A second signal during a drain cancels what is left; the daemon exits.
#[test]
fn second_signal_cancels_a_drain() {
    let (mut d, _) = DaemonProc::start_logging_awaits(Listen::Unix, "shutdown = \"drain\"");
    let c = d.client();
    let a = c.submit_proof(&builtin("synthetic:2^14:4", 64, 3)).unwrap();
    let waiter = await_in_flight(&d, a.job_id);
    d.signal(libc::SIGTERM);
    // The drain has begun (the second signal is the one that cancels).
    d.wait_log("signal SIGTERM received: shutting down");
    d.signal(libc::SIGINT);
    let r = waiter.join().unwrap().unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled, "{}", r.error_message);
    assert!(d.wait(Duration::from_secs(60)).success(), "{}", d.log());
    assert!(d.log().contains("during shutdown: cancelled"), "{}", d.log());
}

/// A drain longer than daemon.shutdown_timeout: the jobs still running are
/// cancelled and named in the log, and the daemon exits cleanly.
#[test]
fn drain_past_shutdown_timeout_cancels() {
    // Two prover threads, as on a 2-core machine: on a many-core one the
    // job's 64 partitions would otherwise finish within the drain.
    let (mut d, _) =
        DaemonProc::start_logging_awaits(Listen::Unix, "shutdown = \"drain\"\nshutdown_timeout = \"1s\"\n[gpus]\ngpu_threads = 2");
    let c = d.client();
    let a = c.submit_proof(&builtin("synthetic:2^14:4", 64, 4)).unwrap();
    let id = a.job_id.clone();
    let waiter = await_in_flight(&d, a.job_id);
    let start = std::time::Instant::now();
    d.signal(libc::SIGTERM);
    let r = waiter.join().unwrap().unwrap();
    assert_eq!(status_of(&r), pb::await_proof_response::Status::Cancelled, "{}", r.error_message);
    // Its timings are those up to the cancel, not zeros: it ran through
    // the whole drain (shutdown_timeout, 1 s) before it was cancelled.
    assert!(r.total_ms >= 1000 && r.total_ms >= r.queue_wait_ms + r.srs_load_ms, "timings of the cancelled job: {r:?}");
    assert!(d.wait(Duration::from_secs(60)).success(), "{}", d.log());
    assert!(start.elapsed() < Duration::from_secs(30), "exit took {:?}", start.elapsed());
    let log = d.log();
    assert!(log.contains("after daemon.shutdown_timeout 1s: cancelled 1 unfinished job(s)") && log.contains(&id), "{log}");
    assert!(log.contains("cuzk-daemon stopped"), "{log}");
}

/// A prove still running when its jobs are cancelled stops at its next
/// circuit or MSM boundary: past daemon.shutdown_timeout the daemon exits
/// within seconds, not when the prove would have ended (issue 55: 92 to
/// 110 s after SIGTERM with a 60 s timeout, on the CPU backend). Here one
/// prover call holds a batch of 32 circuits (seconds of MSMs).
#[test]
fn shutdown_timeout_stops_a_running_prove() {
    const JOBS: u64 = 32;
    const CIRCUIT: &str = "synthetic:2^15:4";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    // Two prover threads, as on a 2-core machine: the call lasts seconds
    // past the drain on a many-core one too.
    let extra = format!(
        "shutdown = \"drain\"\nshutdown_timeout = \"1s\"\n[scheduler]\nmax_batch_size = {JOBS}\nmax_batch_wait_ms = 10000\n[gpus]\ngpu_threads = 2"
    );
    let mut d = DaemonProc::start_on_cpu(dir, Listen::Unix, |listen| config_text(&path, listen, &extra));
    let c = d.client();
    for seed in 0..JOBS {
        c.submit_proof(&builtin(CIRCUIT, 1, seed)).unwrap();
    }
    // The batch's prover call has begun (its SRS generated, its circuits
    // synthesized).
    let t = Instant::now();
    while c.get_status(&pb::GetStatusRequest {}).unwrap().gpus.iter().all(|g| g.current_job_id.is_empty()) {
        assert!(t.elapsed() < Duration::from_secs(300), "the batch never reached the prover:\n{}", d.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = Instant::now();
    d.signal(libc::SIGTERM);
    assert!(d.wait(Duration::from_secs(120)).success(), "{}", d.log());
    let took = start.elapsed();
    let log = d.log();
    assert!(log.contains("after daemon.shutdown_timeout 1s: cancelled 32 unfinished job(s)"), "{log}");
    assert!(took < Duration::from_secs(6), "exit took {took:?} with daemon.shutdown_timeout 1s:\n{log}");
    assert!(log.contains("prove stopped early"), "the prover call was not stopped:\n{log}");
    assert!(!log.contains("job completed"), "{log}");
}

/// The existing daemon's short circuit ids name the production circuits
/// (their parameter files, with the digests in filecoin-proofs' names).
#[test]
fn short_circuit_ids_name_the_production_parameters() {
    let (d, _) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    for (short, digest) in [
        ("porep-32g", "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820"),
        ("porep-64g", "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2"),
        ("wpost-32g", "0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc"),
        ("winning-32g", "559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e"),
        ("snap-32g", "3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18"),
        ("snap-64g", "102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7"),
    ] {
        // No parameter files in the test's cache: the error names the file.
        let (code, msg) = rpc_error(c.preload_srs(&pb::PreloadSrsRequest { circuit_id: short.into() }));
        assert_eq!(code, RpcStatusCode::FAILED_PRECONDITION, "{short}: {msg}");
        assert!(msg.contains(digest), "{short}: {msg}");
        let e = c.evict_srs(&pb::EvictSrsRequest { circuit_id: short.into() }).unwrap();
        assert!(!e.was_loaded, "{short}");
    }
    d.stop();
}
