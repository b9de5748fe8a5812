#!/usr/bin/env python3
"""An independent client of cuzk-daemon: Python grpcio with stubs generated
by grpcio-tools from cuzk-bin/proto/cuzk/v1/proving.proto at run time.

Drives every RPC, bad input, idempotency, cancellation, await timeout and
concurrent Prove calls; asserts what it can check itself and prints one JSON
line {"proofs": [{"circuit", "partitions", "seed", "proof_hex"}]} so the Rust
test verifies the proofs (Groth16 verification needs the pairing).

usage: daemon_client.py PROTO_DIR GEN_DIR ADDR TINY_CIRCUIT
"""

import json
import os
import re
import sys
import threading
import time

proto_dir, gen_dir, addr, tiny = sys.argv[1:5]

from grpc_tools import protoc  # noqa: E402

os.makedirs(gen_dir, exist_ok=True)
rc = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={gen_dir}", f"--grpc_python_out={gen_dir}", "cuzk/v1/proving.proto"])
assert rc == 0, f"protoc failed with {rc}"
sys.path.insert(0, gen_dir)

import grpc  # noqa: E402
from cuzk.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.v1 import proving_pb2_grpc as pb_grpc  # noqa: E402

LIMIT = 256 << 20
channel = grpc.insecure_channel(addr, options=[("grpc.max_send_message_length", LIMIT), ("grpc.max_receive_message_length", LIMIT)])
stub = pb_grpc.ProvingEngineStub(channel)
proofs = []
Status = pb.AwaitProofResponse


def builtin(circuit, partitions, seed, request_id=""):
    return pb.SubmitProofRequest(request_id=request_id, builtin=pb.BuiltinCircuit(circuit=circuit, partitions=partitions, seed=seed))


def keep(circuit, partitions, seed, resp):
    assert resp.status == Status.COMPLETED, (resp.status, resp.error_message)
    assert len(resp.proof) == 192 * partitions, len(resp.proof)
    proofs.append({"circuit": circuit, "partitions": partitions, "seed": seed, "proof_hex": resp.proof.hex()})


def expect_error(call, code, needle):
    try:
        call()
    except grpc.RpcError as e:
        assert e.code() == code, (e.code(), e.details())
        assert needle in e.details(), (needle, e.details())
        return
    raise AssertionError(f"expected {code} mentioning {needle!r}")


# GetStatus, PreloadSRS, SubmitProof + AwaitProof, Prove.
st = stub.GetStatus(pb.GetStatusRequest())
assert len(st.queues) >= 4 and st.pinned_memory_limit_bytes > 0
cid = "builtin-" + tiny.replace(":", "-")
stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id=cid))
assert stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id=cid)).already_loaded
sub = stub.SubmitProof(builtin(tiny, 2, 70))
assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", sub.job_id), sub.job_id
keep(tiny, 2, 70, stub.AwaitProof(pb.AwaitProofRequest(job_id=sub.job_id)))
keep(tiny, 1, 71, stub.Prove(pb.ProveRequest(submit=builtin(tiny, 1, 71))).result)

# Idempotency: the same request id while the first job is live.
a = stub.SubmitProof(builtin(tiny, 16, 80, request_id="py-idem"))
b = stub.SubmitProof(builtin(tiny, 16, 80, request_id="py-idem"))
assert a.job_id == b.job_id, (a.job_id, b.job_id)
keep(tiny, 16, 80, stub.AwaitProof(pb.AwaitProofRequest(job_id=a.job_id)))

# Await timeout and cancellation (random SRS for the bigger circuit).
big = "synthetic:2^14:4"
long_job = stub.SubmitProof(builtin(big, 64, 1))
queued = stub.SubmitProof(builtin(big, 1, 2))
t = time.time()
r = stub.AwaitProof(pb.AwaitProofRequest(job_id=queued.job_id, timeout_ms=150))
assert r.status == Status.TIMEOUT and time.time() - t >= 0.14, (r.status, time.time() - t)
assert not stub.CancelProof(pb.CancelProofRequest(job_id=queued.job_id)).was_running
assert stub.AwaitProof(pb.AwaitProofRequest(job_id=queued.job_id)).status == Status.CANCELLED
stub.CancelProof(pb.CancelProofRequest(job_id=long_job.job_id))
assert stub.AwaitProof(pb.AwaitProofRequest(job_id=long_job.job_id)).status == Status.CANCELLED

# Bad input.
INV = grpc.StatusCode.INVALID_ARGUMENT
expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(proof_kind=7)), INV, "proof_kind 7")
expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(proof_kind=pb.POREP_SEAL_COMMIT, registered_proof=8)), INV, "vanilla_proof is empty")
expect_error(lambda: stub.SubmitProof(pb.SubmitProofRequest(proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b"\x00garbage")), INV, "malformed JSON")
expect_error(lambda: stub.AwaitProof(pb.AwaitProofRequest(job_id="job-424242")), grpc.StatusCode.NOT_FOUND, "unknown job")
expect_error(lambda: stub.CancelProof(pb.CancelProofRequest(job_id="x")), INV, "not a job id")

# Concurrent Prove calls from 5 threads.
errors = []


def worker(k):
    try:
        seed = 900 + k
        keep(tiny, 1, seed, stub.Prove(pb.ProveRequest(submit=builtin(tiny, 1, seed))).result)
    except Exception as e:  # noqa: BLE001
        errors.append(repr(e))


threads = [threading.Thread(target=worker, args=(k,)) for k in range(5)]
for th in threads:
    th.start()
for th in threads:
    th.join()
assert not errors, errors

# Metrics, EvictSRS.
m = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text
assert "cuzk_jobs_completed_total" in m
# The last job can finish a moment before its batch releases the SRS: the
# daemon then answers FAILED_PRECONDITION ("in use"); wait for it to idle.
deadline = time.time() + 30
while True:
    try:
        ev = stub.EvictSRS(pb.EvictSrsRequest(circuit_id=cid))
        break
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.FAILED_PRECONDITION or time.time() > deadline:
            raise
        time.sleep(0.05)
assert ev.was_loaded and ev.freed_bytes > 0
st = stub.GetStatus(pb.GetStatusRequest())
assert st.total_proofs_completed == 8, st.total_proofs_completed

print(json.dumps({"proofs": proofs}))
