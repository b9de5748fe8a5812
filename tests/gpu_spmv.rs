//! The GPU SpMV (cuzk-core's pce::gpu over cuzk-sys's SpmvMatrices)
//! against the CPU SpMV (pce::spmv): the same bytes for a, b, c on random
//! matrices (odd sizes, empty and long rows, every coefficient kind,
//! columns among the inputs and the aux) and on recorded circuits. Device
//! tests skip visibly without a GPU; index checks run everywhere.

use cuzk_core::circuits::CircuitSpec;
use cuzk_core::pce::{self, gpu::GpuPce, Pce, Shape, SparseMatrix};
use cuzk_core::Fr;
use cuzk_sys::{Csr, DeviceBuffer, SpmvMatrices, Stream};
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// A random CSR matrix over `vars` columns: row lengths 0..=6 with some
/// empty rows, every 97th row long (300 entries, summed by a whole warp on
/// the device), and in every 1000 rows a run of 20 around the warp's
/// threshold (30..=36 entries: several long rows in one warp, next to
/// short ones); coefficient indices over the whole table (1, −1 and the
/// rest).
fn random_matrix(rng: &mut ChaCha20Rng, rows: usize, vars: u32, coeffs: u32) -> SparseMatrix {
    let mut m = SparseMatrix { row_ptr: vec![0], cols: Vec::new(), coeff_idx: Vec::new() };
    for r in 0..rows {
        let len = match r % 1000 {
            _ if r % 97 == 5 => 300,
            k @ 210..=229 => 30 + k % 7,
            _ => rng.gen_range(0..=6),
        };
        for _ in 0..len {
            m.cols.push(rng.gen_range(0..vars));
            m.coeff_idx.push(match rng.gen_range(0..4) {
                0 => pce::COEFF_ONE,
                1 => pce::COEFF_MINUS_ONE,
                _ => rng.gen_range(0..coeffs),
            });
        }
        m.row_ptr.push(m.cols.len() as u32);
    }
    m
}

fn random_pce(rng: &mut ChaCha20Rng, rows: usize, num_inputs: usize, num_aux: usize) -> Pce {
    let vars = (num_inputs + num_aux) as u32;
    let mut coeffs = vec![Fr::ONE, -Fr::ONE, Fr::from(2), -Fr::from(2), Fr::from(1 << 20)];
    coeffs.extend((0..20).map(|_| Fr::random(&mut *rng)));
    let n = coeffs.len() as u32;
    let shape = Shape { num_inputs, num_aux, input_order: 0 };
    let (a, b, c) = (random_matrix(rng, rows, vars, n), random_matrix(rng, rows, vars, n), random_matrix(rng, rows, vars, n));
    Pce::from_parts("random".into(), shape, coeffs, a, b, c).unwrap()
}

/// A witness whose values include 0, 1 and −1 (as boolean-heavy circuits
/// have) and random elements.
fn random_witness(rng: &mut ChaCha20Rng, n: usize) -> Vec<Fr> {
    (0..n)
        .map(|_| match rng.gen_range(0..4) {
            0 => Fr::ZERO,
            1 => Fr::ONE,
            2 => -Fr::ONE,
            _ => Fr::random(&mut *rng),
        })
        .collect()
}

fn assert_gpu_equals_cpu(dev: i32, pce: &Pce, inputs: &[Fr], aux: &[Fr], what: &str) {
    let (a, b, c) = pce::spmv::evaluate(pce, inputs, aux);
    let gpu = GpuPce::upload(pce, dev).unwrap();
    assert_eq!(gpu.bytes(), GpuPce::device_bytes(pce).unwrap(), "{what}: device bytes");
    let (ga, gb, gc) = gpu.evaluate_to_host(inputs, aux).unwrap();
    for (name, cpu, gpu) in [("a", &a, &ga), ("b", &b, &gb), ("c", &c, &gc)] {
        assert_eq!(cpu.len(), gpu.len(), "{what}: {name} length");
        if let Some(r) = cpu.iter().zip(gpu.iter()).position(|(x, y)| x != y) {
            panic!("{what}: {name}[{r}] differs: CPU {:?}, GPU {:?}", cpu[r], gpu[r]);
        }
    }
}

fn device_and_rng(test: &str) -> Option<(i32, ChaCha20Rng)> {
    let dev = cuzk_sys::test_device(test)?;
    let seed = cuzk_sys::test_seed("gpu_spmv");
    Some((dev, ChaCha20Rng::seed_from_u64(seed)))
}

#[test]
fn gpu_spmv_equals_cpu_on_random_matrices() {
    let Some((dev, mut rng)) = device_and_rng("gpu_spmv_equals_cpu_on_random_matrices") else { return };
    for (rows, inputs, aux) in [(1, 1, 0), (7, 1, 3), (1000, 3, 997), (4097, 17, 5000), (100_003, 5, 70_001)] {
        let pce = random_pce(&mut rng, rows, inputs, aux);
        let (zi, za) = (random_witness(&mut rng, inputs), random_witness(&mut rng, aux));
        assert_gpu_equals_cpu(dev, &pce, &zi, &za, &format!("{rows} rows, {inputs} inputs, {aux} aux"));
    }
}

#[test]
fn gpu_spmv_equals_cpu_on_recorded_circuits() {
    let Some((dev, _)) = device_and_rng("gpu_spmv_equals_cpu_on_recorded_circuits") else { return };
    for spec in ["synthetic:1000", "synthetic:33333:5", "sha256:1", "mimc:101"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let (pce, w) = pce::record_with_witness("c", spec.instance(7)).unwrap();
        assert_gpu_equals_cpu(dev, &pce, &w.input_assignment, &w.aux_assignment, &format!("{spec:?}"));
    }
}

/// Outputs longer than the rows are zero past them (the H term's padding),
/// whatever the buffers held before.
#[test]
fn gpu_spmv_zero_pads() {
    let Some((dev, mut rng)) = device_and_rng("gpu_spmv_zero_pads") else { return };
    let pce = random_pce(&mut rng, 1000, 2, 900);
    let (zi, za) = (random_witness(&mut rng, 2), random_witness(&mut rng, 900));
    let (a, b, c) = pce::spmv::evaluate(&pce, &zi, &za);
    let gpu = GpuPce::upload(&pce, dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut z = DeviceBuffer::new(dev, 902).unwrap();
    gpu.upload_witness(&stream, &zi, &za, &mut z).unwrap();
    let junk = vec![[u64::MAX; 4]; 1024];
    let mut outs = [(); 3].map(|_| DeviceBuffer::new(dev, 1024).unwrap());
    for o in &mut outs {
        o.copy_from_host(&stream, 0, &junk).unwrap();
    }
    let [oa, ob, oc] = &mut outs;
    gpu.evaluate(&stream, &z, [oa, ob, oc], 1024).unwrap();
    for (cpu, dev_out) in [(&a, &outs[0]), (&b, &outs[1]), (&c, &outs[2])] {
        let mut host = vec![[0u64; 4]; 1024];
        dev_out.copy_to_host(&stream, 0, &mut host).unwrap();
        let expect: Vec<[u64; 4]> = cpu.iter().map(fr_limbs).chain(std::iter::repeat_n([0; 4], 24)).collect();
        assert_eq!(host, expect);
    }
}

fn fr_limbs(x: &Fr) -> [u64; 4] {
    // blstrs::Scalar is its four Montgomery limbs.
    unsafe { std::mem::transmute::<Fr, [u64; 4]>(*x) }
}

/// A witness or buffers of the wrong size are errors, not device faults.
#[test]
fn gpu_spmv_rejects_wrong_sizes() {
    let Some((dev, mut rng)) = device_and_rng("gpu_spmv_rejects_wrong_sizes") else { return };
    let pce = random_pce(&mut rng, 100, 2, 50);
    let gpu = GpuPce::upload(&pce, dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let mut z = DeviceBuffer::new(dev, 52).unwrap();
    let e = gpu.upload_witness(&stream, &[Fr::ONE; 2], &[Fr::ONE; 49], &mut z).unwrap_err();
    assert!(e.to_string().contains("49 aux"), "{e}");
    let short = DeviceBuffer::new(dev, 51).unwrap();
    let mut outs = [(); 3].map(|_| DeviceBuffer::new(dev, 100).unwrap());
    let [a, b, c] = &mut outs;
    let e = gpu.evaluate(&stream, &short, [a, b, c], 100).unwrap_err();
    assert!(e.to_string().contains("z has 51"), "{e}");
    let [a, b, c] = &mut outs;
    let e = gpu.evaluate(&stream, &z, [a, b, c], 99).unwrap_err();
    assert!(e.to_string().contains("for 100 rows"), "{e}");
}

/// Out-of-range indices are refused on the host before anything reaches
/// the device (no device needed: the check comes first).
#[test]
fn spmv_matrices_check_indices() {
    let (row_ptr, cols, coeff_idx) = (vec![0u32, 2, 3], vec![0u32, 4, 1], vec![0u32, 1, 2]);
    let ok = Csr { row_ptr: &row_ptr, cols: &cols, coeff_idx: &coeff_idx };
    let coeffs = [[1u64, 0, 0, 0]; 3];
    let cases: [(Csr, usize, &str); 4] = [
        (ok, 4, "column 4 beyond the 4 variables"),
        (Csr { coeff_idx: &[0, 1, 3], ..ok }, 5, "coefficient 3 beyond the table of 3"),
        (Csr { row_ptr: &[0, 4, 3], ..ok }, 5, "row pointers decrease at row 1"),
        (Csr { row_ptr: &[0, 2, 4], ..ok }, 5, "do not span its 3 entries"),
    ];
    for (bad, vars, expect) in cases {
        let e = SpmvMatrices::new(0, [ok, ok, bad], &coeffs, vars).err().expect(expect);
        assert!(e.to_string().contains(expect), "{e} (expected {expect})");
    }
}

/// Proofs whose H term reads a, b, c from the device SpMV equal the CPU
/// prover's byte for byte (same r, s), one circuit and a batch, at several
/// sizes, odd ones included. The assignments given to the prover carry
/// their witness only (no a, b, c on the host), so a proof that matches
/// took them from the device; the witness of the query MSMs comes from z
/// there too.
#[test]
fn gpu_proofs_with_device_spmv_equal_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{
        BatchSize, Chunks, GpuProver, HInputs, HTerm, Matrices, NextInputs, Plan, PointsAt, Queries, Scratch,
    };
    use cuzk_core::groth16::{self, gpu_srs::SrsPoints};
    let Some((dev, mut rng)) = device_and_rng("gpu_proofs_with_device_spmv_equal_cpu_prover") else { return };
    let prover = GpuProver::new(dev).unwrap();
    for spec in ["synthetic:1000", "synthetic:70001:5", "mimc:333", "sha256:1"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
        let seed: u64 = rng.gen();
        let pce = pce::record("c", spec.instance(seed)).unwrap();
        let witnesses: Vec<_> = (0..3).map(|i| cuzk_core::cs::generate_witness(spec.instance(seed + i)).unwrap()).collect();
        let classic: Vec<_> = witnesses.iter().map(|w| pce.assignment(w.clone()).unwrap()).collect();
        let witness_only: Vec<_> = witnesses.into_iter().map(|w| pce.witness_assignment(w).unwrap()).collect();
        let randomness: Vec<(Fr, Fr)> = (0..3).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
        let cpu = groth16::prove_synthesized_deterministic(&params, &classic, &randomness).unwrap();
        // The CPU prover refuses assignments without a, b, c.
        let err = groth16::prove_synthesized_deterministic(&params, &witness_only, &randomness).unwrap_err();
        assert!(err.to_string().contains("witness only"), "{err}");
        let gpu_pce = GpuPce::upload(&pce, dev).unwrap();
        let m = Some(Matrices { host: &pce, device: Some(&gpu_pce), streamed: None });
        let cases = [
            (1, Queries::AfterH, NextInputs::WhenDue),
            (1, Queries::InHScratch(Scratch::LAndB), NextInputs::WhenDue),
            (3, Queries::AfterH, NextInputs::SecondHBuffers),
            (3, Queries::Batched(BatchSize::Within(u64::MAX)), NextInputs::WhenDue),
        ];
        // Circuit 0 staged whole, or its witness staged ahead of its H
        // buffers (the fallback beside another call's compute).
        for ((n, queries, next), ahead) in cases.into_iter().flat_map(|c| [(c, false), (c, true)]) {
            let plan = Plan {
                circuits: n,
                points: PointsAt::Host,
                h: HTerm::Device,
                inputs: HInputs::SpmvOnDevice,
                queries,
                next,
                chunks: Chunks::Whole,
                z_in_grant: false,
            };
            let batch = &witness_only[..n];
            let staged = match ahead {
                false => prover.stage_h_spmv(&gpu_pce, &batch[0].input_assignment, &batch[0].aux_assignment).unwrap(),
                true => prover.stage_h_from_witness(&gpu_pce, prover.stage_witness(&gpu_pce, &batch[0]).unwrap()).unwrap(),
            };
            let ran = prover.fit(&params, SrsPoints::Host(&params), &batch[0], m, &plan).unwrap();
            assert_eq!(ran.inputs, HInputs::SpmvOnDevice, "{spec:?}, {plan}");
            let results = prover.run(&params, SrsPoints::Host(&params), batch, m, Some(staged), &plan).unwrap();
            for (i, (msms, _)) in results.into_iter().enumerate() {
                let (r, s) = randomness[i];
                let proof = groth16::assemble(&params.vk, msms, r, s);
                assert_eq!(
                    proof.to_bytes(),
                    cpu[i].to_bytes(),
                    "{spec:?}, {plan}, witness ahead {ahead}: proof {i} differs from the CPU prover"
                );
            }
        }
        println!("{spec:?}: device-SpMV proofs (1 and 3 circuits, staged whole or the witness ahead) byte-identical to the CPU prover");
    }
}

/// a, b, c of `pce` from its matrices streamed out of host memory through
/// `staging` bytes, read back with `pad` elements past the constraints
/// (written with junk first: they must come back zero).
fn streamed_to_host(
    dev: i32,
    pce: &std::sync::Arc<Pce>,
    inputs: &[Fr],
    aux: &[Fr],
    staging: u64,
    pad: usize,
) -> cuzk_sys::Result<[Vec<[u64; 4]>; 3]> {
    use cuzk_core::pce::gpu::{Matrix, StreamedPce};
    let streamed = StreamedPce::new(pce, dev)?;
    let stream = Stream::new(dev)?;
    let vars = pce.shape.num_vars();
    let mut z = DeviceBuffer::new(dev, vars.max(1))?;
    z.copy_from_host(&stream, 0, &inputs.iter().chain(aux).map(fr_limbs).collect::<Vec<_>>())?;
    let len = pce.num_constraints() + pad;
    let mut staging = DeviceBuffer::new(dev, staging as usize)?;
    let mut out = DeviceBuffer::new(dev, len)?;
    let mut res = [Vec::new(), Vec::new(), Vec::new()];
    for (m, r) in [Matrix::A, Matrix::B, Matrix::C].into_iter().zip(&mut res) {
        out.copy_from_host(&stream, 0, &vec![[u64::MAX; 4]; len])?;
        streamed.evaluate(pce, m, &stream, &z, &mut out, len, &mut staging)?;
        let mut host = vec![[0u64; 4]; len];
        out.copy_to_host(&stream, 0, &mut host)?;
        *r = host;
    }
    Ok(res)
}

/// The matrices streamed from host memory in chunks give the CPU SpMV's
/// bytes, with the least staging (a chunk per long row), an odd size and
/// one that holds a whole matrix, pageable and then page-locked (once:
/// pinning again does nothing); past the constraints, zeros.
#[test]
fn gpu_streamed_spmv_equals_cpu() {
    use cuzk_core::pce::gpu::StreamedPce;
    let Some((dev, mut rng)) = device_and_rng("gpu_streamed_spmv_equals_cpu") else { return };
    let mut cases: Vec<(Pce, Vec<Fr>, Vec<Fr>, String)> = Vec::new();
    for (rows, inputs, aux) in [(1, 1, 0), (1000, 3, 997), (100_003, 5, 70_001)] {
        let pce = random_pce(&mut rng, rows, inputs, aux);
        let (zi, za) = (random_witness(&mut rng, inputs), random_witness(&mut rng, aux));
        cases.push((pce, zi, za, format!("random, {rows} rows")));
    }
    for spec in ["synthetic:33333:5", "sha256:1"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let (pce, w) = pce::record_with_witness("c", spec.instance(7)).unwrap();
        cases.push((pce, w.input_assignment, w.aux_assignment, format!("{spec:?}")));
    }
    for (pce, zi, za, what) in cases {
        let (a, b, c) = pce::spmv::evaluate(&pce, &zi, &za);
        let pce = std::sync::Arc::new(pce);
        let min = StreamedPce::new(&pce, dev).unwrap().staging_min();
        for (pinned, staging) in [(false, min), (false, 3 * min + 4096 + 768), (false, 64 << 20), (true, min), (true, 64 << 20)] {
            if pinned {
                // Safety: the test's PCE is not modified.
                let first = unsafe { cuzk_core::pce::gpu::pin_matrices(&pce) }.unwrap();
                assert!(first == (staging == min), "pinned on the first call only");
            }
            let got = streamed_to_host(dev, &pce, &zi, &za, staging, 13).unwrap();
            for ((name, cpu), gpu) in ["a", "b", "c"].iter().zip([&a, &b, &c]).zip(&got) {
                let expect: Vec<[u64; 4]> = cpu.iter().map(fr_limbs).chain(std::iter::repeat_n([0; 4], 13)).collect();
                if let Some(r) = expect.iter().zip(gpu).position(|(x, y)| x != y) {
                    panic!("{what}, staging {staging}, pinned {pinned}: {name}[{r}] differs: CPU {:?}, GPU {:?}", expect[r], gpu[r]);
                }
            }
        }
    }
}

/// Staging too small for a chunk of the longest row is an error that says
/// so, and so are outputs shorter than the rows.
#[test]
fn gpu_streamed_spmv_refuses_short_staging_and_outputs() {
    use cuzk_core::pce::gpu::{Matrix, StreamedPce};
    let Some((dev, mut rng)) = device_and_rng("gpu_streamed_spmv_refuses_short_staging_and_outputs") else { return };
    let pce = std::sync::Arc::new(random_pce(&mut rng, 500, 2, 400));
    let (zi, za) = (random_witness(&mut rng, 2), random_witness(&mut rng, 400));
    let min = StreamedPce::new(&pce, dev).unwrap().staging_min();
    let e = streamed_to_host(dev, &pce, &zi, &za, min - 512, 0).unwrap_err();
    assert!(e.to_string().contains("staging bytes hold"), "{e}");
    let streamed = StreamedPce::new(&pce, dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    let z = DeviceBuffer::new(dev, 402).unwrap();
    let mut out = DeviceBuffer::new(dev, 499).unwrap();
    let mut staging = DeviceBuffer::new(dev, min as usize).unwrap();
    let e = streamed.evaluate(&pce, Matrix::A, &stream, &z, &mut out, 499, &mut staging).unwrap_err();
    assert!(e.to_string().contains("for 500 rows"), "{e}");
    let short_z = DeviceBuffer::new(dev, 401).unwrap();
    let mut out = DeviceBuffer::new(dev, 500).unwrap();
    let e = streamed.evaluate(&pce, Matrix::B, &stream, &short_z, &mut out, 500, &mut staging).unwrap_err();
    assert!(e.to_string().contains("z has 401"), "{e}");
}

/// The H term from two buffers (a and b streamed in, their part formed,
/// then c streamed into b's buffer) equals the H term of the host's a, b,
/// c through three buffers, at several domain sizes.
#[test]
fn gpu_h_term_in_two_buffers_from_streamed_matrices() {
    use cuzk_core::pce::gpu::{Matrix, StreamedPce};
    use cuzk_sys::{HTermBuffers, NttContext};
    let Some((dev, _)) = device_and_rng("gpu_h_term_in_two_buffers_from_streamed_matrices") else { return };
    let ctx = NttContext::new(dev).unwrap();
    let stream = Stream::new(dev).unwrap();
    for spec in ["synthetic:1000", "synthetic:70001:5", "mimc:333"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let (pce, w) = pce::record_with_witness("c", spec.instance(11)).unwrap();
        let (a, b, c) = pce::spmv::evaluate(&pce, &w.input_assignment, &w.aux_assignment);
        let log_n = cuzk_core::groth16::gpu_prover::h_log_n(pce.num_constraints()).unwrap();
        let mut bufs = HTermBuffers::new(dev, log_n).unwrap();
        let limbs = |v: &[Fr]| v.iter().map(fr_limbs).collect::<Vec<_>>();
        ctx.h_term(&limbs(&a), &limbs(&b), &limbs(&c), log_n, &mut bufs).unwrap();
        let expect = bufs.h_to_host(&stream).unwrap();

        let pce = std::sync::Arc::new(pce);
        let streamed = StreamedPce::new(&pce, dev).unwrap();
        let n = 1usize << log_n;
        let mut z = DeviceBuffer::new(dev, pce.shape.num_vars()).unwrap();
        let zw: Vec<[u64; 4]> = w.input_assignment.iter().chain(&w.aux_assignment).map(fr_limbs).collect();
        z.copy_from_host(&stream, 0, &zw).unwrap();
        let (mut x, mut y) = (DeviceBuffer::new(dev, n).unwrap(), DeviceBuffer::new(dev, n).unwrap());
        let mut staging = DeviceBuffer::new(dev, (streamed.staging_min() as usize).max(1 << 20)).unwrap();
        streamed.evaluate(&pce, Matrix::A, &stream, &z, &mut x, n, &mut staging).unwrap();
        streamed.evaluate(&pce, Matrix::B, &stream, &z, &mut y, n, &mut staging).unwrap();
        ctx.h_compute_ab(&stream, log_n, &mut x, &mut y).unwrap();
        streamed.evaluate(&pce, Matrix::C, &stream, &z, &mut y, n, &mut staging).unwrap();
        ctx.h_compute_c(&stream, log_n, &mut x, &mut y).unwrap();
        let mut got = vec![[0u64; 4]; n - 1];
        x.copy_to_host(&stream, 0, &mut got).unwrap();
        assert_eq!(got, expect, "{spec:?}: H term from two buffers");
    }
}

/// Proofs whose a, b, c came from matrices streamed out of host memory
/// (the H term formed in two buffers, the third allocated after it) equal
/// the CPU prover's byte for byte (same r, s), with the query MSMs after
/// the H MSM and in its scratch buffer, the MSMs whole and chunked; the
/// plan runs as planned (streamed, not a, b, c from the host). A plan for
/// two circuits falls back to a, b, c computed on the host.
#[test]
fn gpu_proofs_with_streamed_spmv_equal_cpu_prover() {
    use cuzk_core::groth16::gpu_prover::{Chunks, GpuProver, HInputs, HTerm, Matrices, NextInputs, Plan, PointsAt, Queries, Scratch};
    use cuzk_core::groth16::{self, gpu_srs::SrsPoints};
    use cuzk_core::pce::gpu::StreamedPce;
    let Some((dev, mut rng)) = device_and_rng("gpu_proofs_with_streamed_spmv_equal_cpu_prover") else { return };
    let prover = GpuProver::new(dev).unwrap();
    for spec in ["synthetic:1000", "synthetic:70001:5", "mimc:333", "sha256:1"] {
        let spec: CircuitSpec = spec.parse().unwrap();
        let params = groth16::generate_random_parameters(spec.blank(), &mut rng).unwrap();
        let seed: u64 = rng.gen();
        let pce = std::sync::Arc::new(pce::record("c", spec.instance(seed)).unwrap());
        let witnesses: Vec<_> = (0..2).map(|i| cuzk_core::cs::generate_witness(spec.instance(seed + i)).unwrap()).collect();
        let classic: Vec<_> = witnesses.iter().map(|w| pce.assignment(w.clone()).unwrap()).collect();
        let witness_only: Vec<_> = witnesses.into_iter().map(|w| pce.witness_assignment(w).unwrap()).collect();
        let randomness: Vec<(Fr, Fr)> = (0..2).map(|_| (Fr::random(&mut rng), Fr::random(&mut rng))).collect();
        let cpu = groth16::prove_synthesized_deterministic(&params, &classic, &randomness).unwrap();
        let streamed = StreamedPce::new(&pce, dev).unwrap();
        let m = Some(Matrices { host: &pce, device: None, streamed: Some(&streamed) });
        let chunked =
            Chunks::Exactly(cuzk_sys::msm::MsmOptions { max_chunk_points: 1 << 12, max_sort_entries: 1 << 12, ..Default::default() });
        let cases = [
            (1, Queries::AfterH, Chunks::Whole, HInputs::SpmvStreamed),
            (1, Queries::InHScratch(Scratch::LAndB), Chunks::Whole, HInputs::SpmvStreamed),
            (1, Queries::AfterH, chunked, HInputs::SpmvStreamed),
            (2, Queries::AfterH, Chunks::Whole, HInputs::Uploaded),
        ];
        for (n, queries, chunks, runs_as) in cases {
            let plan = Plan {
                circuits: n,
                points: PointsAt::Host,
                h: HTerm::Device,
                inputs: HInputs::SpmvStreamed,
                queries,
                next: NextInputs::WhenDue,
                chunks,
                z_in_grant: false,
            };
            let batch = &witness_only[..n];
            let ran = prover.fit(&params, SrsPoints::Host(&params), &batch[0], m, &plan).unwrap();
            assert_eq!(ran.inputs, runs_as, "{spec:?}, {plan}");
            let results = prover.run(&params, SrsPoints::Host(&params), batch, m, None, &plan).unwrap();
            for (i, (msms, _)) in results.into_iter().enumerate() {
                let (r, s) = randomness[i];
                let proof = groth16::assemble(&params.vk, msms, r, s);
                assert_eq!(proof.to_bytes(), cpu[i].to_bytes(), "{spec:?}, {plan}: proof {i} differs from the CPU prover");
            }
        }
        // Matrices checked from another PCE are refused, not evaluated.
        let other = std::sync::Arc::new(pce::record("c", spec.instance(seed)).unwrap());
        let wrong = Some(Matrices { host: &other, device: None, streamed: Some(&streamed) });
        let plan = Plan {
            circuits: 1,
            points: PointsAt::Host,
            h: HTerm::Device,
            inputs: HInputs::SpmvStreamed,
            queries: Queries::AfterH,
            next: NextInputs::WhenDue,
            chunks: Chunks::Whole,
            z_in_grant: false,
        };
        let ran = prover.fit(&params, SrsPoints::Host(&params), &witness_only[0], wrong, &plan).unwrap();
        assert_eq!(ran.inputs, HInputs::Uploaded, "{spec:?}: another PCE's streamed matrices are not used");
        println!("{spec:?}: streamed-SpMV proofs byte-identical to the CPU prover");
    }
}
