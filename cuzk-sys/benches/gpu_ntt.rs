//! GPU benchmarks (plain binary, device-event timing): D2D copy and pinned
//! upload bandwidth, NTT at 2^20, 2^24, 2^26, 2^27 and the H term at 2^24
//! and 2^27 from pinned host memory. Prints a table last.
//!
//! `cargo bench -p cuzk-sys --bench gpu_ntt` (or the bundled binary, see
//! build/gpu-bundle.sh). Args: `--quick` for fewer runs.

use std::time::Instant;

use cuzk_sys::{DeviceBuffer, DeviceInfo, Event, FrRepr, HTermBuffers, NttContext, NttKind, PinnedBuffer, Stream};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Times `f` (which enqueues work on `stream`) with device events; median ms.
fn time_device(dev: i32, stream: &Stream, runs: usize, mut f: impl FnMut()) -> f64 {
    let (start, end) = (Event::new(dev).unwrap(), Event::new(dev).unwrap());
    f(); // warm-up
    let mut times = Vec::new();
    for _ in 0..runs {
        start.record(stream).unwrap();
        f();
        end.record(stream).unwrap();
        end.synchronize().unwrap();
        times.push(start.elapsed_ms(&end).unwrap() as f64);
    }
    median(times)
}

/// Values below r without a CPU field library: the top limb stays small.
fn fill_pseudo_random(x: &mut [FrRepr], mut seed: u64) {
    for e in x.iter_mut() {
        for l in e.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *l = seed;
        }
        e[3] &= 0x0fff_ffff_ffff_ffff;
    }
}

/// Passes of the NTT kernels over memory for 2^log_n (see native/ntt/transform.cu).
fn ntt_passes(log_n: u32) -> u32 {
    if log_n <= 10 {
        1
    } else {
        1 + (log_n - 10).div_ceil(10)
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 5 } else { 21 };
    let dev = match cuzk_sys::test_device("gpu_ntt bench") {
        Some(d) => d,
        None => return,
    };
    let info = DeviceInfo::query(dev).unwrap();
    println!(
        "device: {} ({} SMs, {:.1} GiB, sm_{}{})",
        info.name,
        info.sm_count,
        info.total_mem_bytes as f64 / (1u64 << 30) as f64,
        info.compute_capability.0,
        info.compute_capability.1
    );
    let stream = Stream::new(dev).unwrap();
    let ctx = NttContext::new(dev).unwrap();

    // `--profile LOG`: a warm-up and 3 forward NTTs of 2^LOG, nothing else
    // (for ncu: its kernels are launches 3.. after the 2 table kernels).
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        let log_n: u32 = args[i + 1].parse().expect("--profile LOG");
        let mut buf = DeviceBuffer::<FrRepr>::new(dev, 1 << log_n).unwrap();
        buf.zero_async(&stream, 0, 1 << log_n).unwrap();
        for _ in 0..4 {
            ctx.ntt(&stream, &mut buf, log_n, NttKind::Forward).unwrap();
        }
        stream.synchronize().unwrap();
        return;
    }
    let mut rows: Vec<String> = Vec::new();

    // Copy ceilings.
    let copy_bytes = 4usize << 30;
    let src = DeviceBuffer::<u8>::new(dev, copy_bytes).unwrap();
    let mut dst = DeviceBuffer::<u8>::new(dev, copy_bytes).unwrap();
    let ms = time_device(dev, &stream, runs, || dst.copy_from_device_async(&stream, &src).unwrap());
    let d2d = 2.0 * copy_bytes as f64 / (ms * 1e-3); // read + write
    rows.push(format!("| D2D copy 4 GiB | {ms:.3} ms | {:.0} GB/s (read+write) |", d2d / 1e9));
    drop((src, dst));

    let up_bytes = 1usize << 30;
    let mut pinned = unsafe { PinnedBuffer::<u8>::zeroed(up_bytes) }.unwrap();
    pinned[0] = 1;
    let mut dbuf = DeviceBuffer::<u8>::new(dev, up_bytes).unwrap();
    let t = Instant::now();
    let reps = if quick { 2 } else { 5 };
    for _ in 0..reps {
        dbuf.copy_from_host(&stream, 0, &pinned).unwrap();
    }
    let h2d = (reps * up_bytes) as f64 / t.elapsed().as_secs_f64();
    rows.push(format!("| H2D pinned 1 GiB | {:.3} ms | {:.1} GB/s |", 1e3 * up_bytes as f64 / h2d, h2d / 1e9));
    drop((pinned, dbuf));

    // NTT.
    for log_n in [20u32, 24, 26, 27] {
        let n = 1usize << log_n;
        let mut host = vec![[0u64; 4]; n];
        fill_pseudo_random(&mut host, 0x9e37_79b9_7f4a_7c15 ^ log_n as u64);
        let mut buf = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
        buf.copy_from_host(&stream, 0, &host).unwrap();
        for kind in [NttKind::Forward, NttKind::CosetInverse] {
            let ms = time_device(dev, &stream, runs, || ctx.ntt(&stream, &mut buf, log_n, kind).unwrap());
            let traffic = 2.0 * 32.0 * n as f64 * (ntt_passes(log_n) + 1) as f64; // passes + bit reversal
            let floor_ms = 2.0 * 32.0 * n as f64 / d2d * 1e3; // one read + one write of the data
            rows.push(format!(
                "| NTT 2^{log_n} {kind:?} | {ms:.3} ms | {:.0} GB/s over {} passes ({:.0}% of copy); 1-pass floor {floor_ms:.2} ms |",
                traffic / (ms * 1e-3) / 1e9,
                ntt_passes(log_n) + 1,
                100.0 * traffic / (ms * 1e-3) / d2d
            ));
            eprintln!("{}", rows.last().unwrap());
        }
    }

    // H term from pinned memory (uploads included), host wall clock.
    for log_n in [24u32, 27] {
        let n = 1usize << log_n;
        let mut inputs: Vec<PinnedBuffer<FrRepr>> = Vec::new();
        for i in 0..3 {
            let mut p = unsafe { PinnedBuffer::<FrRepr>::zeroed(n) }.unwrap();
            fill_pseudo_random(&mut p, 0x1234_5678 + i);
            inputs.push(p);
        }
        let mut bufs = HTermBuffers::new(dev, log_n).unwrap();
        let mut run = || {
            let t = Instant::now();
            ctx.h_term(&inputs[0], &inputs[1], &inputs[2], log_n, &mut bufs).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        };
        run();
        let h_runs = if log_n >= 27 {
            if quick {
                3
            } else {
                7
            }
        } else {
            runs
        };
        let ms = median((0..h_runs).map(|_| run()).collect());
        let upload_floor = 3.0 * 32.0 * n as f64 / h2d * 1e3;
        rows.push(format!(
            "| H term 2^{log_n} (pinned, uploads incl.) | {ms:.1} ms | upload floor {upload_floor:.1} ms at {:.1} GB/s |",
            h2d / 1e9
        ));
        eprintln!("{}", rows.last().unwrap());
        // Pre-staged: inputs already on the device, compute only.
        ctx.h_stage(&stream, &inputs[0], &inputs[1], &inputs[2], log_n, &mut bufs).unwrap();
        let ms = time_device(dev, &stream, h_runs, || ctx.h_compute(&stream, log_n, &mut bufs).unwrap());
        rows.push(format!("| H term 2^{log_n} compute only (pre-staged) | {ms:.1} ms | |"));
        eprintln!("{}", rows.last().unwrap());
    }

    println!("\n| what | median | notes |\n| --- | --- | --- |");
    for r in rows {
        println!("{r}");
    }
}
