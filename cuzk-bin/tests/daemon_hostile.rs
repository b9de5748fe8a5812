//! A hostile client against the daemon: it must keep serving with bounded
//! threads and memory.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The daemon process's thread count.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().count()
}

/// Threads of the daemon's pool for calls that wait (named `cuzk-rpc`).
fn pool_threads(pid: u32) -> usize {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks.filter(|t| t.as_ref().is_ok_and(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "cuzk-rpc"))).count()
}

#[test]
fn idle_slow_and_oversized_http_connections_cost_no_threads() {
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let status = d.status_addr.clone().unwrap();
    assert_eq!(http_get(&status, "/status").0, 200);
    let before = threads(d.child.id());

    // 400 connections that never send, 20 that stop half way.
    let mut idle: Vec<TcpStream> = (0..400).map(|_| TcpStream::connect(&status).unwrap()).collect();
    for _ in 0..20 {
        let mut s = TcpStream::connect(&status).unwrap();
        s.write_all(b"GET /sta").unwrap();
        idle.push(s);
    }
    // A dashboard gets its page beside them. The server accepts
    // connections in the order they were made (one listening socket's
    // queue), so once it answers this one it has accepted all 420: the
    // thread count is read from then on, not after a sleep.
    let mut s = TcpStream::connect(&status).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /status HTTP/1.0\r\n\r\n").unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap_or_else(|e| panic!("no /status beside 420 idle connections: {e}"));
    assert!(page.starts_with("HTTP/1.1 200") && page.contains("\"uptime_secs\""), "{page}");
    let during = threads(d.child.id());
    assert!(during <= before + 2, "{before} threads before, {during} with 420 idle HTTP connections");
    // The server closed the idle connections.
    for s in idle.iter_mut().take(50) {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut b = [0u8; 64];
        assert!(matches!(s.read(&mut b), Ok(0) | Err(_)), "an idle connection is still open");
    }
    drop(idle);

    // An oversized head is refused; a garbage line gets 400.
    let mut s = TcpStream::connect(&status).unwrap();
    let _ = s.write_all(format!("GET /status HTTP/1.0\r\nX: {}\r\n\r\n", "a".repeat(20 << 10)).as_bytes());
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    let mut s = TcpStream::connect(&status).unwrap();
    s.write_all(b"\x00\x01\x02\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert_eq!(http_get(&status, "/metrics").0, 200);

    // gRPC kept serving throughout.
    let r = d.client().prove(&cuzk_bin::proto::ProveRequest { submit: Some(builtin(TINY, 1, 4)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 4, &r.proof);
    let after = threads(d.child.id());
    assert!(after <= before + 2, "{before} threads before, {after} after");
    d.stop();
}

#[test]
fn long_ids_are_refused_and_ids_match_exactly() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let mut req = builtin(TINY, 1, 6);
    req.request_id = "x".repeat(1 << 20);
    let (code, msg) = rpc_error(c.submit_proof(&req));
    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("request_id is 1048576 bytes; ids are at most 256"), "{msg}");
    let (code, msg) = rpc_error(c.await_proof(&pb::AwaitProofRequest { job_id: "y".repeat(1 << 20), timeout_ms: 0 }));
    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("job_id is 1048576 bytes"), "{msg}");

    req.request_id = "z".repeat(256);
    assert_eq!(c.submit_proof(&req).unwrap().job_id, req.request_id);
    req.request_id = "hostile-a".into();
    assert_eq!(c.submit_proof(&req).unwrap().job_id, "hostile-a");
    for padded in ["hostile-a ", " hostile-a", "hostile-a\n", "HOSTILE-A"] {
        let r = c.await_proof(&pb::AwaitProofRequest { job_id: padded.into(), timeout_ms: 0 });
        let (code, _) = rpc_error(r);
        assert!(code == RpcStatusCode::INVALID_ARGUMENT || code == RpcStatusCode::NOT_FOUND, "{padded:?} is not hostile-a: {code:?}");
    }
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: "hostile-a".into(), timeout_ms: 0 }).unwrap();
    assert_eq!(r.status, completed(), "{}", r.error_message);
    assert_valid(&pvk, TINY, 1, 6, &r.proof);
    let log = d.stop();
    assert!(!log.contains(&"x".repeat(200)) && !log.contains(&"y".repeat(200)), "a long id reached the log whole");
}

#[test]
fn a_param_cache_that_is_a_file_or_missing_is_named() {
    use cuzk_bin::proto as pb;
    for (kind, problem) in [("file", "is a file, not a folder"), ("missing", "does not exist")] {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("params");
        if kind == "file" {
            std::fs::write(&cache, b"not a folder").unwrap();
        }
        let want = format!("srs.param_cache {} {problem}", cache.display());
        let d = DaemonProc::start_with(dir, Listen::Unix, |listen| config_text(&cache, listen, ""));
        assert!(d.log().contains(&want), "{kind}: no warning at start:\n{}", d.log());
        let (_, msg) = rpc_error(d.client().preload_srs(&pb::PreloadSrsRequest { circuit_id: "porep-32g".into() }));
        assert!(msg.contains(&want) && msg.contains("missing parameter file"), "{kind}: {msg}");
        // Built-in circuits still prove (their SRS is generated).
        let r = d.client().prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 8)) }).unwrap().result.unwrap();
        assert_eq!(r.status, completed(), "{kind}: {}", r.error_message);
        d.stop();
    }
}

#[test]
fn large_builtin_circuits_are_refused_at_once() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let (code, msg) = rpc_error(c.preload_srs(&pb::PreloadSrsRequest { circuit_id: "builtin-synthetic-4194304-8".into() }));
    assert!(
        code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("4194304 constraints") && msg.contains("daemon.builtin_max_constraints"),
        "{msg}"
    );
    for circuit in ["synthetic:2^20:8", "sha256:4", "mimc:200"] {
        let (code, msg) = rpc_error(c.submit_proof(&builtin(circuit, 1, 1)));
        assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("up to 65536"), "{circuit}: {msg}");
    }
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 9)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 9, &r.proof);
    let s = c.get_status(&Default::default()).unwrap();
    assert!(s.loaded_srs.iter().all(|e| !e.circuit_id.contains("4194304")), "{:?}", s.loaded_srs);
    // Refused before any work (not by a clock: a loaded machine is slow
    // either way): the only SRS loaded is TINY's (from its file), and none
    // was generated.
    let log = d.stop();
    let srs: Vec<_> = log.lines().filter(|l| l.contains("srs generate") || l.contains("srs loaded")).collect();
    assert!(srs.len() == 1 && srs[0].contains("srs loaded circuit_id=builtin-synthetic-1024-4"), "{srs:?}");

    // The key raises the limit.
    let (d, _) = DaemonProc::start(Listen::Unix, "builtin_max_constraints = 200000");
    let p = d.client().preload_srs(&pb::PreloadSrsRequest { circuit_id: "builtin-synthetic-70000-4".into() }).unwrap();
    assert!(!p.already_loaded);
    d.stop();
}

/// The daemon's resident memory in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).unwrap().trim().trim_end_matches(" kB").trim().parse().unwrap();
    kb >> 10
}

#[test]
fn refused_large_requests_leave_no_memory_behind() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let before = rss_mib(d.child.id());
    // WinningPoSt is kilobytes: 10 MB is refused by its size, before decoding.
    let winning = pb::SubmitProofRequest {
        proof_kind: pb::ProofKind::WinningPost as i32,
        registered_proof: 3,
        vanilla_proofs: vec![vec![7u8; 10 << 20]],
        randomness: vec![0; 32],
        ..Default::default()
    };
    let (code, msg) = rpc_error(c.submit_proof(&winning));
    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("WinningPoSt request is at most 8 MiB"), "{msg}");
    // 200 MB PoRep bodies that are not JSON, 3 at a time (each on its own
    // daemon thread, so in its own allocator arena), twice.
    for round in 0..2u8 {
        std::thread::scope(|s| {
            for i in 0..3u8 {
                let c = &c;
                s.spawn(move || {
                    let porep = pb::SubmitProofRequest {
                        proof_kind: pb::ProofKind::PorepSealCommit as i32,
                        registered_proof: 8,
                        vanilla_proof: vec![b'!' + round * 3 + i; 200 << 20],
                        ..Default::default()
                    };
                    let (code, msg) = rpc_error(c.submit_proof(&porep));
                    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("malformed JSON"), "{msg}");
                });
            }
        });
    }
    // The calls' buffers may outlive their answers by a moment (freed
    // after the status is sent): RSS that never comes back is the failure.
    let t = Instant::now();
    let after = loop {
        let after = rss_mib(d.child.id());
        if after < before + 64 || t.elapsed() > Duration::from_secs(30) {
            break after;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("daemon RSS: {before} MiB before, {after} MiB after 6 refused 200 MB requests");
    assert!(after < before + 64, "{before} MiB before, {after} MiB 30 s after the refused requests");
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 10)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 10, &r.proof);
    d.stop();
}

/// Calls `method` with `body` as the request's bytes (whatever they are).
fn raw_call<Resp: prost::Message + Default + Unpin>(
    d: &DaemonProc,
    method: &'static str,
    body: Vec<u8>,
) -> (grpcio::RpcStatusCode, String) {
    #[allow(clippy::ptr_arg)] // grpcio's Marshaller<Vec<u8>> takes fn(&Vec<u8>, ..), not a slice
    fn as_is(b: &Vec<u8>, buf: &mut grpcio::GrpcSlice) -> grpcio::Result<()> {
        *buf = grpcio::GrpcSlice::from(b.clone());
        Ok(())
    }
    fn read_all(mut r: grpcio::MessageReader) -> grpcio::Result<Vec<u8>> {
        let mut v = Vec::new();
        r.read_to_end(&mut v).map_err(|e| grpcio::Error::Codec(e.into()))?;
        Ok(v)
    }
    let m: grpcio::Method<Vec<u8>, Resp> = grpcio::Method {
        ty: grpcio::MethodType::Unary,
        name: method,
        req_mar: grpcio::Marshaller { ser: as_is, de: read_all },
        resp_mar: grpcio::Marshaller { ser: grpcio::pr_ser, de: grpcio::pr_de },
    };
    let env = std::sync::Arc::new(grpcio::EnvBuilder::new().cq_count(1).build());
    let ch = grpcio::ChannelBuilder::new(env).connect(&cuzk_bin::client::target(&d.addr).unwrap());
    rpc_error(grpcio::Client::new(ch).unary_call(&m, &body, grpcio::CallOption::default()))
}

#[test]
fn undecodable_requests_are_answered_logged_and_counted() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, _) = DaemonProc::start(Listen::Unix, "");
    // A field tag with no field number, then a truncated varint.
    let garbage = vec![0x00, 0xff, 0xff, 0xff];
    let (code, msg) = raw_call::<pb::SubmitProofResponse>(&d, "/cuzk.v1.ProvingEngine/SubmitProof", garbage.clone());
    assert_eq!(code, RpcStatusCode::INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("the request does not decode as a cuzk.v1.SubmitProofRequest"), "{msg}");
    let (code, msg) = raw_call::<pb::PreloadSrsResponse>(&d, "/cuzk.v1.ProvingEngine/PreloadSRS", garbage);
    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("cuzk.v1.PreloadSrsRequest"), "{msg}");
    let c = d.client();
    let metrics = c.get_metrics(&Default::default()).unwrap().prometheus_text;
    for m in ["SubmitProof", "PreloadSRS"] {
        let line = format!("cuzk_rpc_requests_total{{method=\"{m}\",code=\"INVALID_ARGUMENT\"}} 1");
        assert!(metrics.contains(&line), "{line} not in {metrics}");
    }
    let log = d.wait_log("does not decode as a cuzk.v1.SubmitProofRequest");
    assert!(log.contains("rpc SubmitProof error"), "{log}");
    // The daemon still serves.
    assert!(c.get_status(&Default::default()).is_ok());
    d.stop();
}

/// At most `max_waiting_calls` calls wait at once; the next are refused at
/// once, and a refusal costs no thread.
#[test]
fn waiting_calls_are_bounded() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    // A lone job waits 15 s for its batch to fill: calls awaiting it wait
    // too. The log says when each call starts waiting, so the test knows
    // when both are in: counting the pool's threads would not tell (the
    // one SubmitProof used stays idle a while and counts too).
    let (d, pvk) =
        DaemonProc::start_logging_awaits(Listen::Unix, "max_waiting_calls = 2\n[scheduler]\nmax_batch_size = 8\nmax_batch_wait_ms = 15000");
    let c = d.client();
    let job_id = c.submit_proof(&builtin(TINY, 1, 70)).unwrap().job_id;
    let wait = pb::AwaitProofRequest { job_id: job_id.clone(), timeout_ms: 0 };
    let waiting: Vec<_> = (0..2)
        .map(|_| {
            let (c, wait) = (c.clone(), wait.clone());
            std::thread::spawn(move || c.await_proof(&wait))
        })
        .collect();
    d.wait_log_times(&format!("rpc AwaitProof job={job_id} waiting"), 2);
    let busy_threads = threads(d.child.id());
    for _ in 0..20 {
        let (code, msg) = rpc_error(c.await_proof(&wait));
        assert!(code == RpcStatusCode::RESOURCE_EXHAUSTED && msg.contains("daemon.max_waiting_calls"), "{msg}");
    }
    // Calls that do not wait still answer, and no thread was added.
    assert!(c.get_status(&Default::default()).is_ok());
    assert!(threads(d.child.id()) <= busy_threads, "{} threads, {busy_threads} before", threads(d.child.id()));
    assert_eq!(pool_threads(d.child.id()), 2);
    for w in waiting {
        let r = w.join().unwrap().unwrap();
        assert_eq!(r.status, completed(), "{}", r.error_message);
        assert_valid(&pvk, TINY, 1, 70, &r.proof);
    }
    // Their threads take the next calls.
    let r = c.prove(&pb::ProveRequest { submit: Some(builtin(TINY, 1, 71)) }).unwrap().result.unwrap();
    assert_valid(&pvk, TINY, 1, 71, &r.proof);
    d.stop();
}

/// Errors and log lines show a client's long strings clipped with their
/// length: a 10 KB circuit id echoed whole (three times) made the status
/// message too large for gRPC's metadata, and the client got "metadata
/// size exceeds hard limit" instead of the error.
#[test]
fn long_client_strings_are_clipped_in_errors_and_logs() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    let circuit_id = "c".repeat(10 << 10);
    let (code, msg) = rpc_error(c.preload_srs(&pb::PreloadSrsRequest { circuit_id }));
    assert_eq!(code, RpcStatusCode::FAILED_PRECONDITION, "{msg}");
    assert!(msg.contains("unknown circuit id") && msg.contains("… (10240 bytes)") && msg.len() < 2048, "{msg}");
    let spec = format!("synthetic:{}", "9".repeat(10 << 10));
    let (code, msg) = rpc_error(c.submit_proof(&builtin(&spec, 1, 1)));
    assert_eq!(code, RpcStatusCode::INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("bad circuit spec") && msg.contains(&format!("… ({} bytes)", spec.len())) && msg.len() < 2048, "{msg}");
    // Within the id limit (256 bytes), still more than is shown.
    let job_id = "j".repeat(200);
    let (code, msg) = rpc_error(c.await_proof(&pb::AwaitProofRequest { job_id, timeout_ms: 0 }));
    assert!(code == RpcStatusCode::INVALID_ARGUMENT && msg.contains("… (200 bytes)") && msg.len() < 512, "{msg}");
    let mut req = builtin(TINY, 1, 11);
    req.request_id = "r".repeat(200);
    assert_eq!(c.submit_proof(&req).unwrap().job_id, req.request_id, "an id is clipped where shown, never changed");
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: req.request_id.clone(), timeout_ms: 0 }).unwrap();
    assert_valid(&pvk, TINY, 1, 11, &r.proof);
    let log = d.stop();
    for long in ["c", "9", "j", "r"] {
        assert!(!log.contains(&long.repeat(200)), "a long {long:?} string reached the log whole");
    }
    assert!(log.contains(&format!("request_id=\"{}\"… (200 bytes)", "r".repeat(128))), "{log}");
}

/// A request_id names one request: reused for a live job with another
/// request, it is refused (ALREADY_EXISTS, naming the id and the job)
/// rather than answered with the other request's proof. The same request
/// again still gets its job.
#[test]
fn a_request_id_reused_for_another_request_is_refused() {
    use cuzk_bin::proto as pb;
    use grpcio::RpcStatusCode;
    let (d, pvk) = DaemonProc::start(Listen::Unix, "");
    let c = d.client();
    // Live for a while: 64 partitions, and its SRS is generated first.
    let mut first = builtin("synthetic:2^14:4", 64, 80);
    first.request_id = "reused-1".into();
    assert_eq!(c.submit_proof(&first).unwrap().job_id, "reused-1");
    let mut other = builtin(TINY, 1, 81);
    other.request_id = "reused-1".into();
    let (code, msg) = rpc_error(c.submit_proof(&other));
    assert_eq!(code, RpcStatusCode::ALREADY_EXISTS, "{msg}");
    assert!(msg.contains("request_id \"reused-1\"") && msg.contains("another request"), "{msg}");
    let (code, msg) = rpc_error(c.prove(&pb::ProveRequest { submit: Some(other.clone()) }));
    assert_eq!(code, RpcStatusCode::ALREADY_EXISTS, "{msg}");
    // Differing in one field of the payload is another request too.
    let mut seed = first.clone();
    seed.builtin.as_mut().unwrap().seed += 1;
    assert_eq!(rpc_error(c.submit_proof(&seed)).0, RpcStatusCode::ALREADY_EXISTS);
    // The same request (at another priority) is the same job.
    let mut again = first.clone();
    again.priority = pb::Priority::High as i32;
    assert_eq!(c.submit_proof(&again).unwrap().job_id, "reused-1");
    c.cancel_proof(&pb::CancelProofRequest { job_id: "reused-1".into() }).unwrap();
    let r = c.await_proof(&pb::AwaitProofRequest { job_id: "reused-1".into(), timeout_ms: 0 }).unwrap();
    assert_eq!(r.status, pb::await_proof_response::Status::Cancelled as i32, "{}", r.error_message);
    // Once its job has ended, the id may name a new request.
    let r = c.prove(&pb::ProveRequest { submit: Some(other) }).unwrap().result.unwrap();
    assert_eq!((r.status, r.job_id.as_str()), (completed(), "reused-1"), "{}", r.error_message);
    assert_valid(&pvk, TINY, 1, 81, &r.proof);
    let log = d.stop();
    assert!(log.contains("job request_id conflict") && log.contains("request_id=\"reused-1\""), "{log}");
}

/// A client that keeps a thousand idle or slow connections open to the
/// status port, opening new ones as fast as they are closed, must not
/// shut out a real /status request (issue 55: 1 request in 40 got its
/// page, the others resets).
#[test]
fn a_flood_of_idle_connections_does_not_shut_out_status() {
    let (d, _) = DaemonProc::start(Listen::Unix, "");
    let status = d.status_addr.clone().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (flood_stop, flood_addr) = (stop.clone(), status.clone());
    let (opened_tx, opened_rx) = std::sync::mpsc::channel();
    let flood = std::thread::spawn(move || {
        let mut open = std::collections::VecDeque::new();
        let mut n = 0usize;
        while !flood_stop.load(std::sync::atomic::Ordering::Relaxed) {
            let Ok(mut s) = TcpStream::connect(&flood_addr) else { continue };
            if n.is_multiple_of(5) {
                let _ = s.write_all(b"GET /sta"); // slow: half a request line
            }
            open.push_back(s);
            if open.len() > 1000 {
                open.pop_front();
            }
            n += 1;
            if n == 1000 {
                let _ = opened_tx.send(());
            }
        }
        n
    });
    opened_rx.recv_timeout(Duration::from_secs(60)).expect("the flood opened 1000 connections");
    let t = Instant::now();
    for i in 0..40 {
        let mut s = TcpStream::connect(&status).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /status HTTP/1.0\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap_or_else(|e| panic!("request {i} beside the flood: {e}"));
        assert!(text.starts_with("HTTP/1.1 200") && text.contains("\"uptime_secs\""), "request {i}: {text}");
    }
    let took = t.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let opened = flood.join().unwrap();
    eprintln!("40 /status requests in {took:?} beside a flood of {opened} connections");
    assert!(took < Duration::from_secs(10), "40 /status requests took {took:?} beside the flood");
    d.stop();
}
