//! The `cuzk.v1.ProvingEngine` methods as the daemon registers them with
//! grpcio, decoding requests itself: a request grpcio would refuse before
//! any handler runs (bytes that are not the method's message, or over the
//! size limit) is refused here instead, logged and counted in
//! `cuzk_rpc_requests_total` like any other answer, with a message that
//! names the request (grpcio's own says "response" and is never logged).
//!
//! The gRPC library still refuses a message over [`RECEIVE_CEILING_BYTES`]
//! before the daemon sees it: that bound keeps what one call can make the
//! daemon buffer.

use super::service::ProvingService;
use crate::proto::{self as pb, ProvingEngine, MAX_MESSAGE_BYTES};
use grpcio::{GrpcSlice, Marshaller, MessageReader, Method, MethodType, RpcStatus, RpcStatusCode, ServiceBuilder};

/// The largest message the gRPC library receives for the daemon; requests
/// between [`MAX_MESSAGE_BYTES`] and this are refused by the daemon.
pub const RECEIVE_CEILING_BYTES: usize = 2 * MAX_MESSAGE_BYTES;

/// A request as the daemon decoded it, or why it is refused.
pub type Decoded<T> = Result<T, Refused>;

/// A request refused before decoding: the answer, and the request's size.
pub struct Refused {
    pub status: RpcStatus,
    pub bytes: usize,
}

/// Decodes a request; never fails in grpcio's sense, so the handler
/// always runs and answers.
fn decode<T: prost::Message + Default>(reader: MessageReader) -> grpcio::Result<Decoded<T>> {
    let bytes = reader.len();
    if bytes > MAX_MESSAGE_BYTES {
        let message = format!("the request is {bytes} bytes, over the daemon's limit of {} MiB", MAX_MESSAGE_BYTES >> 20);
        return Ok(Err(Refused { status: RpcStatus::with_message(RpcStatusCode::RESOURCE_EXHAUSTED, message), bytes }));
    }
    Ok(grpcio::pr_de::<T>(reader).map_err(|e| {
        let what = std::any::type_name::<T>().rsplit("::").next().unwrap_or("message");
        let message = format!("the request does not decode as a cuzk.v1.{what}: {e}");
        Refused { status: RpcStatus::with_message(RpcStatusCode::INVALID_ARGUMENT, message), bytes }
    }))
}

/// Requests are never serialized by the server; a decoded one is, for
/// completeness of the marshaller.
fn encode<T: prost::Message>(request: &Decoded<T>, buf: &mut GrpcSlice) -> grpcio::Result<()> {
    match request {
        Ok(m) => grpcio::pr_ser(m, buf),
        Err(r) => Err(grpcio::Error::RpcFailure(r.status.clone())),
    }
}

/// The method `name` with our request decoding.
fn method<Req: prost::Message + Default, Resp: prost::Message + Default>(name: &'static str) -> Method<Decoded<Req>, Resp> {
    Method {
        ty: MethodType::Unary,
        name,
        req_mar: Marshaller { ser: encode::<Req>, de: decode::<Req> },
        resp_mar: Marshaller { ser: grpcio::pr_ser, de: grpcio::pr_de },
    }
}

/// The service, every method registered with [`decode`].
pub fn proving_engine(service: ProvingService) -> grpcio::Service {
    // (name, request, response, handler); the name is also the one logs
    // and metrics give the method.
    macro_rules! methods {
        ($builder:expr, $(($name:literal, $req:ty, $resp:ty, $handler:ident)),* $(,)?) => {
            $builder
            $(.add_unary_handler(&method::<$req, $resp>(concat!("/cuzk.v1.ProvingEngine/", $name)), {
                let mut s = service.clone();
                move |ctx, req: Decoded<$req>, sink| match req {
                    Ok(req) => s.$handler(ctx, req, sink),
                    Err(refused) => s.refuse(&ctx, sink, $name, refused),
                }
            }))*
        };
    }
    methods!(
        ServiceBuilder::new(),
        ("SubmitProof", pb::SubmitProofRequest, pb::SubmitProofResponse, submit_proof),
        ("AwaitProof", pb::AwaitProofRequest, pb::AwaitProofResponse, await_proof),
        ("Prove", pb::ProveRequest, pb::ProveResponse, prove),
        ("CancelProof", pb::CancelProofRequest, pb::CancelProofResponse, cancel_proof),
        ("GetStatus", pb::GetStatusRequest, pb::GetStatusResponse, get_status),
        ("GetMetrics", pb::GetMetricsRequest, pb::GetMetricsResponse, get_metrics),
        ("PreloadSRS", pb::PreloadSrsRequest, pb::PreloadSrsResponse, preload_srs),
        ("EvictSRS", pb::EvictSrsRequest, pb::EvictSrsResponse, evict_srs),
    )
    .build()
}
