//! The `cuzk.v1.ProvingEngine` gRPC service over the engine.
//!
//! grpcio runs handlers on its completion-queue threads, which must not
//! block: quick calls answer inline; calls that wait (SubmitProof's
//! checks, AwaitProof, Prove, PreloadSRS) run on the blocking pool (at
//! most `daemon.max_waiting_calls` at once, more are refused) and hand the
//! reply back to grpcio. No request can panic the daemon: handler work runs under
//! `catch_unwind` and a panic becomes an INTERNAL status.

use super::blocking_pool::BlockingPool;
use super::methods::Refused;
use super::rpc_metrics::RpcMetrics;
use super::wire::{self, invalid};
use crate::proto as pb;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::client_text::clipped;
use cuzk_core::engine::{BuiltinJob, Engine, JobId, ProofWork};
use grpcio::{RpcContext, RpcStatus, RpcStatusCode, UnarySink};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct ProvingService {
    engine: Arc<Engine>,
    metrics: Arc<RpcMetrics>,
    /// Highest job number handed out, so a forced shutdown can cancel all.
    max_job: Arc<AtomicU64>,
    /// `daemon.builtin_max_constraints`.
    builtin_max_constraints: usize,
    blocking: BlockingPool,
}

type RpcResult<T> = Result<T, RpcStatus>;

impl ProvingService {
    /// `max_waiting_calls`: calls that may block at once (`daemon.max_waiting_calls`).
    pub fn new(engine: Arc<Engine>, metrics: Arc<RpcMetrics>, builtin_max_constraints: usize, max_waiting_calls: usize) -> Self {
        let blocking = BlockingPool::new("cuzk-rpc", max_waiting_calls);
        Self { engine, metrics, max_job: Arc::default(), builtin_max_constraints, blocking }
    }

    /// A built-in circuit within `daemon.builtin_max_constraints`: a larger
    /// one would start minutes of random setup (no params on disk).
    fn check_builtin(&self, spec: &CircuitSpec) -> RpcResult<()> {
        let (n, max) = (spec.constraints(), self.builtin_max_constraints);
        if n > max {
            return Err(invalid(format!(
                "built-in circuit {spec} has {n} constraints; this daemon takes built-in circuits up to {max} (daemon.builtin_max_constraints)"
            )));
        }
        Ok(())
    }

    /// Cancels every job this service submitted that has not ended;
    /// returns the ones cancelled.
    pub fn cancel_all(&self) -> Vec<JobId> {
        let max = self.max_job.load(Ordering::Acquire);
        (0..=max).map(JobId).filter(|&id| self.engine.cancel(id).is_ok_and(|c| c.cancelled)).collect()
    }

    /// A job_id as clients give it: the request_id a job was submitted
    /// with or the UUID it was given (matched exactly, as the existing
    /// daemon uses it for the job id), else our `job-<n>`.
    fn resolve(&self, job_id: &str) -> RpcResult<JobId> {
        wire::check_id_len("job_id", job_id)?;
        match self.engine.job_by_request(job_id) {
            Some(id) if !job_id.is_empty() => Ok(id),
            _ => wire::parse_job_id(job_id),
        }
    }

    /// Submits `req`; returns the job and the id its client knows it by:
    /// the request_id, or a new UUID where the client gave none, made the
    /// job's request_id so AwaitProof, CancelProof and status take it.
    fn submit(&self, req: &pb::SubmitProofRequest) -> RpcResult<(JobId, String)> {
        // The line operators grep for a request; a long id is cut in the log.
        let kind = pb::ProofKind::from_i32(req.proof_kind).map_or("unknown", |k| k.as_str_name());
        log::info!(
            "rpc submit request_id={:?} proof_kind={kind} input_bytes={}",
            clipped(&req.request_id),
            prost::Message::encoded_len(req)
        );
        let size = prost::Message::encoded_len(req);
        if req.proof_kind == pb::ProofKind::WinningPost as i32 && size > MAX_WINNING_POST_BYTES {
            return Err(invalid(format!(
                "a WinningPoSt request is at most {} MiB (one sector's vanilla proof is ~150 KiB); this one is {size} bytes",
                MAX_WINNING_POST_BYTES >> 20
            )));
        }
        let mut request = wire::to_request(req)?;
        if let ProofWork::Builtin(job) = &request.work {
            self.check_builtin(&job.spec)?;
        }
        let client_id = request.request_id.get_or_insert_with(new_job_uuid).clone();
        let id = self.engine.submit(request).map_err(|e| wire::engine_error(&e))?;
        self.max_job.fetch_max(id.0, Ordering::AcqRel);
        Ok((id, client_id))
    }

    /// [`Self::submit`], then, for a large request that was refused, the
    /// freed memory handed back to the system (else idle RSS stays at the
    /// peak of the refused requests).
    fn submit_owned(&self, req: pb::SubmitProofRequest) -> RpcResult<(JobId, String)> {
        let large = prost::Message::encoded_len(&req) > RETURN_MEMORY_ABOVE_BYTES;
        let result = self.submit(&req);
        drop(req);
        if large && result.is_err() {
            release_freed_memory();
        }
        result
    }

    /// Answers on the grpcio thread with what `work` returns.
    fn reply<T: Send + 'static>(&self, ctx: &RpcContext, sink: UnarySink<T>, method: &'static str, work: impl FnOnce() -> RpcResult<T>) {
        let result = guarded(method, work);
        self.send(ctx, sink, method, result);
    }

    /// Runs `work` (which may block) on the blocking pool, then answers.
    fn reply_blocking<T: Send + 'static>(
        &self,
        ctx: &RpcContext,
        sink: UnarySink<T>,
        method: &'static str,
        work: impl FnOnce() -> RpcResult<T> + Send + 'static,
    ) {
        let (tx, rx) = futures::channel::oneshot::channel();
        let queued = self.blocking.run(move || {
            let _ = tx.send(guarded(method, work));
        });
        if let Err(busy) = queued {
            let message = format!(
                "the daemon has {} calls waiting (AwaitProof, Prove, SubmitProof, PreloadSRS; daemon.max_waiting_calls); retry {method} later",
                busy.max
            );
            return self.send(ctx, sink, method, Err(RpcStatus::with_message(RpcStatusCode::RESOURCE_EXHAUSTED, message)));
        }
        let metrics = self.metrics.clone();
        ctx.spawn(async move {
            let result = rx.await.unwrap_or_else(|_| Err(RpcStatus::with_message(RpcStatusCode::INTERNAL, format!("{method}: no reply"))));
            deliver(sink, method, result, &metrics).await;
        });
    }

    /// Answers a request refused before decoding (`methods::decode`); a
    /// large one's memory is handed back at once.
    pub fn refuse<T: Send + 'static>(&self, ctx: &RpcContext, sink: UnarySink<T>, method: &'static str, refused: Refused) {
        if refused.bytes > RETURN_MEMORY_ABOVE_BYTES {
            release_freed_memory();
        }
        self.send(ctx, sink, method, Err(refused.status));
    }

    fn send<T: Send + 'static>(&self, ctx: &RpcContext, sink: UnarySink<T>, method: &'static str, result: RpcResult<T>) {
        let metrics = self.metrics.clone();
        ctx.spawn(async move { deliver(sink, method, result, &metrics).await });
    }
}

fn guarded<T>(method: &'static str, work: impl FnOnce() -> RpcResult<T>) -> RpcResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|p| {
        let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        log::error!("{method} panicked: {what}");
        Err(RpcStatus::with_message(RpcStatusCode::INTERNAL, format!("{method} failed inside the daemon: {what}")))
    })
}

async fn deliver<T>(sink: UnarySink<T>, method: &'static str, result: RpcResult<T>, metrics: &RpcMetrics) {
    metrics.record(method, result.as_ref().err().map(|s| s.code()));
    let sent = match result {
        Ok(v) => sink.success(v).await,
        Err(status) => {
            log::info!("rpc {method} error code={:?} message={:?}", status.code(), status.message());
            sink.fail(status).await
        }
    };
    if let Err(e) = sent {
        log::debug!("rpc {method}: reply not delivered (client gone?): {e}");
    }
}

/// WinningPoSt proves one sector: its request is kilobytes (the limit
/// leaves a wide margin over 64 GiB sectors' ~150 KiB vanilla proof).
const MAX_WINNING_POST_BYTES: usize = 8 << 20;
/// Refused requests above this size give their memory back at once.
const RETURN_MEMORY_ABOVE_BYTES: usize = 16 << 20;

/// Returns freed heap memory to the system (glibc keeps it otherwise).
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the allocator's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn timeout(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

impl pb::ProvingEngine for ProvingService {
    fn submit_proof(&mut self, ctx: RpcContext, req: pb::SubmitProofRequest, sink: UnarySink<pb::SubmitProofResponse>) {
        // Checking a request can mean parsing ~50 MB of JSON: off the grpcio thread.
        let this = self.clone();
        self.reply_blocking(&ctx, sink, "SubmitProof", move || {
            let (id, job_id) = this.submit_owned(req)?;
            let queue_position = this.engine.queue_position(id).unwrap_or(0) as u32;
            Ok(pb::SubmitProofResponse { job_id, queue_position, assigned_gpu: String::new() })
        });
    }

    fn await_proof(&mut self, ctx: RpcContext, req: pb::AwaitProofRequest, sink: UnarySink<pb::AwaitProofResponse>) {
        let id = match self.resolve(&req.job_id) {
            Ok(id) => id,
            Err(s) => return self.send(&ctx, sink, "AwaitProof", Err(s)),
        };
        let engine = self.engine.clone();
        self.reply_blocking(&ctx, sink, "AwaitProof", move || {
            // Where a call starts waiting: the shutdown tests signal the
            // daemon after it (debug: a client polling with timeouts makes
            // one per call).
            log::debug!("rpc AwaitProof job={} waiting", req.job_id);
            let outcome = engine.await_job(id, timeout(req.timeout_ms)).map_err(|e| wire::engine_error(&e))?;
            Ok(pb::AwaitProofResponse { job_id: req.job_id, ..wire::await_response(id, &outcome) })
        });
    }

    fn prove(&mut self, ctx: RpcContext, req: pb::ProveRequest, sink: UnarySink<pb::ProveResponse>) {
        let this = self.clone();
        self.reply_blocking(&ctx, sink, "Prove", move || {
            let submit = req.submit.ok_or_else(|| invalid("ProveRequest.submit is missing"))?;
            let (id, job_id) = this.submit_owned(submit)?;
            let outcome = this.engine.await_job(id, None).map_err(|e| wire::engine_error(&e))?;
            let result = pb::AwaitProofResponse { job_id, ..wire::await_response(id, &outcome) };
            Ok(pb::ProveResponse { result: Some(result) })
        });
    }

    fn cancel_proof(&mut self, ctx: RpcContext, req: pb::CancelProofRequest, sink: UnarySink<pb::CancelProofResponse>) {
        let this = self.clone();
        self.reply(&ctx, sink, "CancelProof", move || {
            let id = this.resolve(&req.job_id)?;
            let r = this.engine.cancel(id).map_err(|e| wire::engine_error(&e))?;
            Ok(pb::CancelProofResponse { was_running: r.was_running })
        });
    }

    fn get_status(&mut self, ctx: RpcContext, _req: pb::GetStatusRequest, sink: UnarySink<pb::GetStatusResponse>) {
        let engine = self.engine.clone();
        self.reply(&ctx, sink, "GetStatus", move || Ok(wire::status_response(&engine.status())));
    }

    fn get_metrics(&mut self, ctx: RpcContext, _req: pb::GetMetricsRequest, sink: UnarySink<pb::GetMetricsResponse>) {
        let (engine, metrics) = (self.engine.clone(), self.metrics.clone());
        self.reply(&ctx, sink, "GetMetrics", move || {
            Ok(pb::GetMetricsResponse { prometheus_text: engine.metrics() + &metrics.prometheus() })
        });
    }

    fn preload_srs(&mut self, ctx: RpcContext, req: pb::PreloadSrsRequest, sink: UnarySink<pb::PreloadSrsResponse>) {
        if req.circuit_id.trim().is_empty() {
            return self.send(&ctx, sink, "PreloadSRS", Err(invalid("circuit_id is empty")));
        }
        if let Some(spec) = BuiltinJob::spec_of_circuit_id(req.circuit_id.trim()) {
            if let Err(e) = self.check_builtin(&spec) {
                return self.send(&ctx, sink, "PreloadSRS", Err(e));
            }
        }
        let engine = self.engine.clone();
        self.reply_blocking(&ctx, sink, "PreloadSRS", move || {
            let r = engine.preload_srs(req.circuit_id.trim()).map_err(|e| wire::engine_error(&e))?;
            Ok(pb::PreloadSrsResponse { already_loaded: r.already_loaded, load_time_ms: r.load_time_ms })
        });
    }

    fn evict_srs(&mut self, ctx: RpcContext, req: pb::EvictSrsRequest, sink: UnarySink<pb::EvictSrsResponse>) {
        let engine = self.engine.clone();
        self.reply(&ctx, sink, "EvictSRS", move || {
            if req.circuit_id.trim().is_empty() {
                return Err(invalid("circuit_id is empty"));
            }
            let r = engine.evict_srs(req.circuit_id.trim()).map_err(|e| wire::engine_error(&e))?;
            Ok(pb::EvictSrsResponse { was_loaded: r.was_loaded, freed_bytes: r.freed_bytes })
        });
    }
}

/// A random (version 4) UUID: the job id of a request without a
/// request_id.
fn new_job_uuid() -> String {
    let mut b = [0u8; 16];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}
