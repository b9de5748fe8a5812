//! Conversions between the `cuzk.v1` messages and the engine's types:
//! requests (checked, with errors that name the field), outcomes, status,
//! and engine errors and kinds of failure as gRPC status codes.

use crate::proto as pb;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::engine::{
    BuiltinJob, EngineError, EngineStatus, JobId, JobOutcome, JobTimings, PayloadDigest, Priority, ProofKind, ProofRequest, ProofWork,
    WorkerRole,
};
use cuzk_core::failure::ErrorKind;
use cuzk_core::filecoin::{prover_id_from_miner, ProofRequest as FilecoinRequest};
use grpcio::{RpcStatus, RpcStatusCode};

/// Built-in circuits are for tests and demos; these bounds keep a request
/// from asking the daemon for hours of setup or more memory than it has.
pub const MAX_BUILTIN_PARTITIONS: u32 = 64;
pub const MAX_SYNTHETIC_CONSTRAINTS: usize = 1 << 22;
pub const MAX_SHA256_BLOCKS: usize = 64;
pub const MAX_MIMC_HASHES: usize = 1 << 20;

/// The longest request_id (and job_id) taken: ids name jobs (UUIDs,
/// `porep-<miner>-<sector>`), they are stored and logged.
pub const MAX_ID_BYTES: usize = 256;

pub fn invalid(message: impl Into<String>) -> RpcStatus {
    RpcStatus::with_message(RpcStatusCode::INVALID_ARGUMENT, message.into())
}

/// A SubmitProofRequest as an engine request.
pub fn to_request(r: &pb::SubmitProofRequest) -> Result<ProofRequest, RpcStatus> {
    let priority = match pb::Priority::from_i32(r.priority) {
        Some(pb::Priority::Unspecified) => None,
        Some(pb::Priority::Low) => Some(Priority::Low),
        Some(pb::Priority::Normal) => Some(Priority::Normal),
        Some(pb::Priority::High) => Some(Priority::High),
        Some(pb::Priority::Critical) => Some(Priority::Critical),
        None => return Err(invalid(format!("priority {} is not a known Priority (0-4)", r.priority))),
    };
    let kind = proof_kind(r.proof_kind)?;
    let work = match (kind, &r.builtin) {
        (None, None) => {
            return Err(invalid("proof_kind is unspecified (set a Filecoin proof kind, or the builtin field for a built-in circuit)"))
        }
        (Some(k), Some(_)) => return Err(invalid(format!("the builtin field needs proof_kind PROOF_KIND_UNSPECIFIED, not {k}"))),
        (None, Some(b)) => ProofWork::Builtin(builtin_job(b)?),
        // Decoded and checked once, by the engine's submission.
        (Some(kind), None) => ProofWork::Request(std::sync::Arc::new(filecoin_request(kind, r))),
    };
    check_id_len("request_id", &r.request_id)?;
    let request_id = Some(r.request_id.clone()).filter(|s| !s.is_empty());
    // Only a request_id can name an earlier request to compare with.
    let payload_digest = request_id.as_ref().map(|_| payload_digest(r));
    Ok(ProofRequest { request_id, payload_digest, priority, work })
}

/// What makes a request this proof: every field but request_id (the key
/// it is compared under) and priority (a resubmission may come with
/// another; the job keeps its own), hashed (BLAKE2b-256) as encoded.
pub fn payload_digest(r: &pb::SubmitProofRequest) -> PayloadDigest {
    let payload = pb::SubmitProofRequest { request_id: String::new(), priority: 0, ..r.clone() };
    let hash = blake2b_simd::Params::new().hash_length(32).hash(&prost::Message::encode_to_vec(&payload));
    hash.as_bytes().try_into().expect("a 32-byte BLAKE2b hash")
}

/// A proof_kind as the engine's kind; None = PROOF_KIND_UNSPECIFIED (a
/// built-in circuit).
pub fn proof_kind(proof_kind: i32) -> Result<Option<ProofKind>, RpcStatus> {
    Ok(match pb::ProofKind::from_i32(proof_kind) {
        Some(pb::ProofKind::Unspecified) => None,
        Some(pb::ProofKind::PorepSealCommit) => Some(ProofKind::PorepSealCommit),
        Some(pb::ProofKind::SnapDealsUpdate) => Some(ProofKind::SnapDealsUpdate),
        Some(pb::ProofKind::WindowPostPartition) => Some(ProofKind::WindowPostPartition),
        Some(pb::ProofKind::WinningPost) => Some(ProofKind::WinningPost),
        None => {
            return Err(invalid(format!(
                "proof_kind {proof_kind} is not a known ProofKind (1 POREP_SEAL_COMMIT, 2 SNAP_DEALS_UPDATE, 3 WINDOW_POST_PARTITION, 4 WINNING_POST)"
            )))
        }
    })
}

fn builtin_job(b: &pb::BuiltinCircuit) -> Result<BuiltinJob, RpcStatus> {
    let spec: CircuitSpec = b.circuit.parse().map_err(|e: cuzk_core::circuits::SpecError| invalid(format!("builtin.circuit: {e}")))?;
    let too_big = match spec {
        CircuitSpec::Synthetic { constraints, .. } => constraints > MAX_SYNTHETIC_CONSTRAINTS,
        CircuitSpec::Sha256 { blocks } => blocks > MAX_SHA256_BLOCKS,
        CircuitSpec::Mimc { hashes } => hashes > MAX_MIMC_HASHES,
    };
    if too_big {
        return Err(invalid(format!(
            "builtin.circuit {spec} is larger than built-in circuits may be (synthetic ≤ 2^22 constraints, sha256 ≤ {MAX_SHA256_BLOCKS} blocks, mimc ≤ 2^20 hashes)"
        )));
    }
    if b.partitions > MAX_BUILTIN_PARTITIONS {
        return Err(invalid(format!("builtin.partitions {} is more than {MAX_BUILTIN_PARTITIONS}", b.partitions)));
    }
    Ok(BuiltinJob::new(spec, b.partitions.max(1) as usize, b.seed))
}

/// The Filecoin request a SubmitProofRequest of `kind` carries (decoded
/// and checked by the engine's submission, or by `filecoin::prepare`).
pub fn filecoin_request(kind: ProofKind, r: &pb::SubmitProofRequest) -> FilecoinRequest {
    FilecoinRequest {
        kind,
        sector_size: r.sector_size,
        registered_proof: r.registered_proof,
        vanilla_proof: r.vanilla_proof.clone(),
        vanilla_proofs: r.vanilla_proofs.clone(),
        sector_number: r.sector_number,
        prover_id: prover_id_from_miner(r.miner_id),
        randomness: r.randomness.clone(),
        partition_index: r.partition_index,
        comm_r_old: r.comm_r_old.clone(),
        comm_r_new: r.comm_r_new.clone(),
        comm_d_new: r.comm_d_new.clone(),
    }
}

/// A circuit id as the existing daemon's status names it: its short id
/// (`porep-32g`, ...) where it has one.
pub fn compat_circuit_id(circuit_id: &str) -> String {
    cuzk_core::filecoin::short_id_of(circuit_id).map_or_else(|| circuit_id.to_string(), str::to_string)
}

/// An id of at most [`MAX_ID_BYTES`]; the error names `field`.
pub fn check_id_len(field: &str, id: &str) -> Result<(), RpcStatus> {
    if id.len() > MAX_ID_BYTES {
        return Err(invalid(format!("{field} is {} bytes; ids are at most {MAX_ID_BYTES}", id.len())));
    }
    Ok(())
}

/// Our `job-<n>`, exactly (no spaces around it).
pub fn parse_job_id(s: &str) -> Result<JobId, RpcStatus> {
    s.parse().map_err(|e: String| invalid(format!("job_id: {e}")))
}

pub fn await_response(id: JobId, outcome: &JobOutcome) -> pb::AwaitProofResponse {
    use pb::await_proof_response::Status;
    let mut resp = pb::AwaitProofResponse { job_id: id.to_string(), ..Default::default() };
    match outcome {
        JobOutcome::Completed(out) => {
            resp.set_status(Status::Completed);
            resp.proof = out.proof.clone();
            set_timings(&mut resp, &out.timings);
        }
        JobOutcome::Failed { kind, message, timings } => {
            resp.set_status(Status::Failed);
            resp.error_message = message.clone();
            resp.error_code = code_of(*kind).into();
            set_timings(&mut resp, timings);
        }
        JobOutcome::Cancelled { timings } => {
            resp.set_status(Status::Cancelled);
            resp.error_message = "the job was cancelled".into();
            set_timings(&mut resp, timings);
        }
        JobOutcome::Timeout => {
            resp.set_status(Status::Timeout);
            resp.error_message = "timeout_ms passed before the job ended; it is still queued or running".into();
        }
    }
    resp
}

fn set_timings(resp: &mut pb::AwaitProofResponse, t: &JobTimings) {
    resp.queue_wait_ms = t.queue_wait_ms;
    resp.srs_load_ms = t.srs_load_ms;
    resp.synthesis_ms = t.synthesis_ms;
    resp.gpu_compute_ms = t.gpu_compute_ms;
    resp.total_ms = t.total_ms;
}

/// The gRPC code a kind of failure is answered with: a call that fails
/// with it, and a failed job's `error_code`.
pub fn code_of(kind: ErrorKind) -> RpcStatusCode {
    match kind {
        ErrorKind::BadInput => RpcStatusCode::INVALID_ARGUMENT,
        // Parameters to put in place; an SRS to evict once idle.
        ErrorKind::MissingParams | ErrorKind::BadParams | ErrorKind::Busy => RpcStatusCode::FAILED_PRECONDITION,
        ErrorKind::ResourceExhausted => RpcStatusCode::RESOURCE_EXHAUSTED,
        ErrorKind::Unavailable => RpcStatusCode::UNAVAILABLE,
        ErrorKind::Cancelled => RpcStatusCode::CANCELLED,
        ErrorKind::Internal => RpcStatusCode::INTERNAL,
    }
}

pub fn engine_error(e: &EngineError) -> RpcStatus {
    let code = match e {
        EngineError::UnknownJob(_) => RpcStatusCode::NOT_FOUND,
        EngineError::ShuttingDown => RpcStatusCode::UNAVAILABLE,
        EngineError::BadRequest(_) => RpcStatusCode::INVALID_ARGUMENT,
        EngineError::Circuit(e) => code_of(e.kind),
        EngineError::Srs { kind, .. } => code_of(*kind),
        EngineError::RequestIdConflict { .. } => RpcStatusCode::ALREADY_EXISTS,
        EngineError::Start(_) => RpcStatusCode::INTERNAL,
    };
    RpcStatus::with_message(code, e.to_string())
}

pub fn status_response(s: &EngineStatus) -> pb::GetStatusResponse {
    let gpus = s
        .devices
        .iter()
        .map(|d| {
            let busy = s.workers.iter().find(|w| w.role == WorkerRole::Prover && w.gpu == Some(d.ordinal) && w.busy);
            pb::GpuStatus {
                ordinal: d.ordinal,
                name: d.name.clone(),
                // 0 for the CPU backend's one "device", which has no VRAM.
                vram_total_bytes: d.vram.budget().unwrap_or(0),
                vram_free_bytes: d.vram.budget().unwrap_or(0).saturating_sub(d.vram.used_bytes),
                current_job_id: busy.and_then(|w| w.job).map(|j| super::status_json::client_job_id(s, j)).unwrap_or_default(),
                current_proof_kind: busy.and_then(|w| w.kind).map(|k| k.compat_name()).unwrap_or_default().to_string(),
            }
        })
        .collect();
    let loaded_srs = s
        .srs
        .iter()
        .map(|e| {
            let tier = if e.tier == "hot" { pb::srs_status::Tier::Hot } else { pb::srs_status::Tier::Warm };
            pb::SrsStatus {
                circuit_id: compat_circuit_id(&e.circuit_id),
                tier: tier as i32,
                size_bytes: e.size_bytes,
                ref_count: e.ref_count as u32,
            }
        })
        .collect();
    let queues = s
        .queues
        .iter()
        .map(|q| pb::QueueStatus {
            proof_kind: q.kind.compat_name().to_string(),
            pending: q.pending as u32,
            in_progress: q.in_progress as u32,
        })
        .collect();
    pb::GetStatusResponse {
        gpus,
        loaded_srs,
        queues,
        total_proofs_completed: s.jobs_completed,
        total_proofs_failed: s.jobs_failed,
        uptime_seconds: s.uptime_seconds,
        pinned_memory_bytes: s.memory.used_bytes,
        pinned_memory_limit_bytes: s.memory.budget_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(circuit: &str, partitions: u32) -> pb::SubmitProofRequest {
        pb::SubmitProofRequest { builtin: Some(pb::BuiltinCircuit { circuit: circuit.into(), partitions, seed: 7 }), ..Default::default() }
    }

    fn err(r: &pb::SubmitProofRequest) -> String {
        to_request(r).unwrap_err().message().to_string()
    }

    #[test]
    fn builtin_requests() {
        let req = to_request(&builtin("synthetic:1024:4", 3)).unwrap();
        assert!(matches!(req.work, ProofWork::Builtin(b) if b.partitions == 3 && b.seed == 7));
        assert!(err(&builtin("synthetic:2^30", 1)).contains("larger than"));
        assert!(err(&builtin("bogus:1", 1)).contains("builtin.circuit"));
        assert!(err(&builtin("sha256:1", 1000)).contains("more than 64"));
        let mut r = builtin("sha256:1", 1);
        r.proof_kind = 1;
        assert!(err(&r).contains("PROOF_KIND_UNSPECIFIED"));
    }

    /// Each kind of failure reaches its code: a failed job's `error_code`
    /// (status FAILED and the message unchanged, as Curio reads them), and
    /// the status of a call that fails with it.
    #[test]
    fn kinds_of_failure_as_grpc_codes() {
        use cuzk_core::failure::CircuitError;
        let want = [
            (ErrorKind::BadInput, RpcStatusCode::INVALID_ARGUMENT),
            (ErrorKind::MissingParams, RpcStatusCode::FAILED_PRECONDITION),
            (ErrorKind::BadParams, RpcStatusCode::FAILED_PRECONDITION),
            (ErrorKind::Busy, RpcStatusCode::FAILED_PRECONDITION),
            (ErrorKind::ResourceExhausted, RpcStatusCode::RESOURCE_EXHAUSTED),
            (ErrorKind::Unavailable, RpcStatusCode::UNAVAILABLE),
            (ErrorKind::Cancelled, RpcStatusCode::CANCELLED),
            (ErrorKind::Internal, RpcStatusCode::INTERNAL),
        ];
        for (kind, code) in want {
            let failed = JobOutcome::Failed { kind, message: format!("it failed: {kind}"), timings: JobTimings::default() };
            let r = await_response(JobId(3), &failed);
            assert_eq!(r.status, pb::await_proof_response::Status::Failed as i32);
            assert_eq!((r.error_code, r.error_message.as_str()), (i32::from(code), format!("it failed: {kind}").as_str()));
            let srs = engine_error(&EngineError::Srs { circuit_id: "c".into(), kind, message: "m".into() });
            assert_eq!((srs.code(), srs.message()), (code, "SRS c: m"));
            let circuit = engine_error(&EngineError::Circuit(CircuitError::new(kind, "n")));
            assert_eq!((circuit.code(), circuit.message()), (code, "n"));
        }
        let cancelled = await_response(JobId(3), &JobOutcome::Cancelled { timings: JobTimings::default() });
        assert_eq!(cancelled.error_code, 0);
    }

    #[test]
    fn kinds_and_priorities() {
        let mut r = pb::SubmitProofRequest::default();
        assert!(err(&r).contains("unspecified"));
        r.proof_kind = 9;
        assert!(err(&r).contains("proof_kind 9"));
        r = builtin("sha256:1", 1);
        r.priority = 7;
        assert!(err(&r).contains("priority 7"));
        r.priority = 4;
        assert_eq!(to_request(&r).unwrap().priority, Some(Priority::Critical));
    }
}
