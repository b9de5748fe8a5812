//! `cuzk bench spmv`: a, b, c from a witness through the circuit's PCE,
//! on all cores and on the GPU with the matrices resident there, and what
//! the GPU path replaces: uploading a, b, c computed on the host; the GPU
//! with the matrices streamed from host memory (a card without room for
//! them), pageable and page-locked. Then the
//! GPU prover's staging of one partition's H term inputs both ways (the
//! part of a partition's GPU time where the two paths differ; the H term
//! and the MSMs after it are the same work).

use super::bench::{row, time_runs};
use anyhow::Result;
use cuzk_core::circuits::CircuitSpec;
use cuzk_core::pce::{self, spmv};
use std::hint::black_box;

pub fn run(circuit: CircuitSpec, runs: usize) -> Result<()> {
    let size = circuit.to_string();
    let id = cuzk_core::engine::BuiltinJob::circuit_id_of(&circuit);
    let mut recorded = None;
    row(
        "record pce + witness",
        &size,
        time_runs(1, || {
            recorded = Some(pce::record_with_witness(&id, circuit.instance(1))?);
            Ok(())
        })?,
    );
    let (p, w) = recorded.expect("recorded");
    println!(
        "pce: {} constraints, {} variables, nnz A {} B {} C {}, {} coefficients",
        p.num_constraints(),
        p.shape.num_inputs + p.shape.num_aux,
        p.a.nnz(),
        p.b.nnz(),
        p.c.nnz(),
        p.coeffs.len()
    );
    let threads = cuzk_core::par::threads();
    row(
        &format!("cpu spmv, {threads} thr"),
        &size,
        time_runs(runs, || {
            black_box(spmv::evaluate(&p, &w.input_assignment, &w.aux_assignment));
            Ok(())
        })?,
    );
    #[cfg(feature = "cuda")]
    gpu::run(std::sync::Arc::new(p), &w, runs, &size)?;
    Ok(())
}

#[cfg(feature = "cuda")]
mod gpu {
    use super::{row, time_runs};
    use anyhow::{bail, Result};
    use cuzk_core::cs::WitnessOnly;
    use cuzk_core::groth16::gpu_prover::{GpuProver, Matrices};
    use cuzk_core::pce::gpu::{GpuPce, Matrix, StreamedPce};
    use cuzk_core::pce::{spmv, Pce};
    use cuzk_core::Fr;
    use cuzk_sys::{DeviceBuffer, Event, FrRepr, Stream};
    use std::hint::black_box;
    use std::sync::Arc;

    fn repr(s: &[Fr]) -> &[FrRepr] {
        // blstrs::Scalar is #[repr(transparent)] over blst's four limbs.
        unsafe { std::slice::from_raw_parts(s.as_ptr() as *const FrRepr, s.len()) }
    }

    /// Matrices uploaded once; per run the witness upload and the three
    /// products (wall clock, and the kernels' device time alone); then
    /// uploading the host's a, b, c, which the device SpMV replaces. The
    /// device's a, b, c are checked against the host's once.
    pub fn run(shared: Arc<Pce>, w: &WitnessOnly, runs: usize, size: &str) -> Result<()> {
        let p: &Pce = &shared;
        if cuzk_sys::device_count().unwrap_or(0) == 0 {
            println!("gpu spmv: no CUDA device, skipped");
            return Ok(());
        }
        let dev = 0;
        let mut gpu = None;
        row(
            "gpu: upload matrices",
            size,
            time_runs(1, || {
                gpu = Some(GpuPce::upload(p, dev)?);
                Ok(())
            })?,
        );
        let gpu = gpu.expect("uploaded");
        println!("gpu: matrices and coefficients take {:.1} MiB of VRAM", gpu.bytes() as f64 / (1u64 << 20) as f64);
        let (stream, start, end) = (Stream::new(dev)?, Event::new(dev)?, Event::new(dev)?);
        let n = p.num_constraints();
        let mut z = DeviceBuffer::new(dev, gpu.num_vars())?;
        let alloc = || DeviceBuffer::<FrRepr>::new(dev, n.max(1));
        let (mut a, mut b, mut c) = (alloc()?, alloc()?, alloc()?);
        row(
            "gpu: witness upload",
            size,
            time_runs(runs, || {
                gpu.upload_witness(&stream, &w.input_assignment, &w.aux_assignment, &mut z)?;
                Ok(())
            })?,
        );
        // Wall clock and device time of `f`'s work on `stream`, then a, b, c
        // checked against the host's.
        let (ha, hb, hc) = spmv::evaluate(p, &w.input_assignment, &w.aux_assignment);
        let timed = |label: &str,
                     outs: [&mut DeviceBuffer<FrRepr>; 3],
                     f: &mut dyn FnMut([&mut DeviceBuffer<FrRepr>; 3]) -> Result<()>|
         -> Result<()> {
            let [a, b, c] = outs;
            let mut device_ms = Vec::new();
            row(
                label,
                size,
                time_runs(runs, || {
                    start.record(&stream)?;
                    f([&mut *a, &mut *b, &mut *c])?;
                    end.record(&stream)?;
                    end.synchronize()?;
                    device_ms.push(start.elapsed_ms(&end)? as f64);
                    Ok(())
                })?,
            );
            device_ms.sort_by(|x, y| x.total_cmp(y));
            row(&format!("{label}, device time"), size, (device_ms[device_ms.len() / 2], device_ms[0]));
            for (name, host, dev_out) in [("a", &ha, &*a), ("b", &hb, &*b), ("c", &hc, &*c)] {
                let mut back = vec![[0u64; 4]; n];
                dev_out.copy_to_host(&stream, 0, &mut back)?;
                if back != repr(host) {
                    bail!("{label}: {name} differs from the CPU SpMV");
                }
            }
            Ok(())
        };
        timed("gpu spmv (a, b, c)", [&mut a, &mut b, &mut c], &mut |[a, b, c]| Ok(gpu.evaluate(&stream, &z, [a, b, c], n)?))?;
        row(
            "upload host a, b, c",
            size,
            time_runs(runs, || {
                a.copy_from_host(&stream, 0, repr(&ha))?;
                b.copy_from_host(&stream, 0, repr(&hb))?;
                c.copy_from_host(&stream, 0, repr(&hc))?;
                Ok(())
            })?,
        );
        let streamed = StreamedPce::new(&shared, dev)?;
        let mut staging = DeviceBuffer::<u8>::new(dev, GpuProver::streamed_staging_bytes(&streamed) as usize)?;
        let mut streamed_rows = |label: &str| {
            timed(label, [&mut a, &mut b, &mut c], &mut |[a, b, c]| {
                for (m, out) in [(Matrix::A, a), (Matrix::B, b), (Matrix::C, c)] {
                    streamed.evaluate(p, m, &stream, &z, out, n, &mut staging)?;
                }
                Ok(())
            })
        };
        streamed_rows("gpu spmv streamed, pageable")?;
        // Safety: the PCE is not modified while it lives (pinned until then).
        unsafe { cuzk_core::pce::gpu::pin_matrices(p)? };
        streamed_rows("gpu spmv streamed, page-locked")?;
        drop((a, b, c, z, ha, hb, hc, staging));
        // The prover's H buffers (allocated and freed per run on both paths).
        let prover = GpuProver::new(dev)?;
        let classic = p.assignment(w.clone())?;
        row(
            "prover stage_h: a, b, c uploaded",
            size,
            time_runs(runs, || {
                black_box(prover.stage_h(&classic, None)?);
                Ok(())
            })?,
        );
        drop(classic);
        let witness_only = p.witness_assignment(w.clone())?;
        let m = Some(Matrices { host: p, device: Some(&gpu), streamed: None });
        row(
            "prover stage_h: spmv on device",
            size,
            time_runs(runs, || {
                black_box(prover.stage_h(&witness_only, m)?);
                Ok(())
            })?,
        );
        Ok(())
    }
}
