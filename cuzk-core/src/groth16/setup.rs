//! Parameter generation from toxic waste (α, β, γ, δ, τ).
//!
//! The circuit's recorded R1CS ([`crate::pce`]) is evaluated as a QAP at τ
//! ([`super::qap`]), then every query point is a fixed-base multiplication
//! of the generator ([`crate::arith::fixed_base`]), in slabs, each slab
//! parallel over its points. The output matches bellperson's
//! `generate_parameters` query for query (A and B exclude the points at
//! infinity; an aux variable that no constraint uses is an error because
//! its L point would be the identity).
//!
//! Queries go to a [`QuerySink`] in file order as they are computed: into
//! memory ([`generate_parameters`]), or straight into a `.params` file
//! ([`write_parameters`]), which never holds a query's points, only the
//! QAP at τ (three field elements per variable), B's scalars and one slab.
//! The multiplications run on the GPU when one is given
//! ([`Device::Gpu`], native/fixed_base/), with the same window tables.

use super::qap::{self, QapAtTau};
use crate::arith::fixed_base::{Device, FixedBase};
use crate::ntt::{Domain, NttError};
use crate::pce::{Pce, PceError};
use crate::srs::{Parameters, ParamsLayout, ParamsStream, VerifyingKey};
use bellpepper_core::{Circuit, SynthesisError};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use ff::Field;
use group::{Curve, Group};
use log::debug;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("recording the circuit: {0}")]
    Pce(PceError),
    #[error("{0}")]
    Domain(#[from] NttError),
    #[error("auxiliary variable {index} appears in no constraint (its L point would be the identity)")]
    UnconstrainedVariable { index: usize },
    #[error("toxic waste {0} is zero")]
    ZeroTrapdoor(&'static str),
    #[error("tau is a root of unity of the domain, which makes Z(tau) zero")]
    TauInDomain,
    #[error("{0}")]
    Gpu(#[from] crate::arith::fixed_base::FixedBaseError),
    #[error("writing {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

impl From<PceError> for SetupError {
    fn from(e: PceError) -> Self {
        match e {
            PceError::Synthesis(e) => SetupError::Synthesis(e),
            e => SetupError::Pce(e),
        }
    }
}

/// The secret trapdoors of a Groth16 setup.
#[derive(Clone, Copy, Debug)]
pub struct ToxicWaste {
    pub alpha: Fr,
    pub beta: Fr,
    pub gamma: Fr,
    pub delta: Fr,
    pub tau: Fr,
}

impl ToxicWaste {
    pub fn random(rng: &mut impl RngCore) -> Self {
        Self {
            alpha: Fr::random(&mut *rng),
            beta: Fr::random(&mut *rng),
            gamma: Fr::random(&mut *rng),
            delta: Fr::random(&mut *rng),
            tau: Fr::random(&mut *rng),
        }
    }

    /// Reproducible toxic waste (tests, benchmarks and test parameters that
    /// must be made again identically; never for production).
    pub fn from_seed(seed: u64) -> Self {
        Self::random(&mut ChaCha20Rng::seed_from_u64(seed))
    }
}

/// Progress of a long setup: (points done, points in all).
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Receives the parameters in file order: the verifying key, then H, L, A,
/// B_G1 (G1) and B_G2 (G2), each announced with its length and then given
/// in slabs.
pub trait QuerySink {
    type Error;
    fn vk(&mut self, vk: &VerifyingKey) -> Result<(), Self::Error>;
    fn section(&mut self, len: usize) -> Result<(), Self::Error>;
    fn g1(&mut self, points: &[G1Affine]) -> Result<(), Self::Error>;
    fn g2(&mut self, points: &[G2Affine]) -> Result<(), Self::Error>;
}

/// Points per slab: large enough to keep every core (or the GPU, whose
/// call uploads the window table each time) busy, small enough to be
/// nothing next to the QAP.
const SLAB: usize = 1 << 22;

/// Generates parameters from random toxic waste.
pub fn generate_random_parameters<C: Circuit<Fr>>(circuit: C, rng: &mut impl RngCore) -> Result<Parameters, SetupError> {
    generate_parameters(circuit, &ToxicWaste::random(rng), None)
}

/// Generates parameters from the given toxic waste, in memory, on the GPU
/// when there is one ([`Device::detect`]).
pub fn generate_parameters<C: Circuit<Fr>>(circuit: C, tw: &ToxicWaste, progress: Option<Progress>) -> Result<Parameters, SetupError> {
    generate_parameters_from_pce(crate::pce::record("setup", circuit)?, tw, progress, Device::detect())
}

/// Generates parameters from a circuit's recorded R1CS, in memory, with
/// the fixed-base multiplications on `device`.
pub fn generate_parameters_from_pce(
    pce: Pce,
    tw: &ToxicWaste,
    progress: Option<Progress>,
    device: Device,
) -> Result<Parameters, SetupError> {
    let mut sink = InMemory::default();
    generate_into(pce, tw, progress, device, &mut sink).map_err(|e| e.unwrap_or_else(|never| match never {}))?;
    Ok(sink.into_params())
}

/// Generates parameters from a circuit's recorded R1CS straight into the
/// `.params` file (written to a temporary name and renamed into place) and
/// the `.vk` file beside it, with the fixed-base multiplications on
/// `device`. Returns the verifying key.
pub fn write_parameters(
    pce: Pce,
    tw: &ToxicWaste,
    progress: Option<Progress>,
    device: Device,
    params_path: &Path,
    vk_path: &Path,
) -> Result<VerifyingKey, SetupError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SetupError::Io { path, source }
    };
    let layout = params_layout(&pce)?;
    let mut sink = ToFile { stream: ParamsStream::create_with_room(params_path, &layout).map_err(io(params_path))?, vk: None };
    generate_into(pce, tw, progress, device, &mut sink).map_err(|e| e.unwrap_or_else(io(params_path)))?;
    sink.stream.finish().map_err(io(params_path))?;
    let vk = sink.vk.expect("the verifying key comes first");
    vk.write_file(vk_path).map_err(io(vk_path))?;
    Ok(vk)
}

/// The `.params` layout of `pce`'s setup, known before any work: A and B
/// at most, as they hold the variables the matrices use less any whose
/// polynomial vanishes at τ (with a random τ, none in practice).
pub fn params_layout(pce: &Pce) -> Result<ParamsLayout, NttError> {
    let n = 1usize << Domain::log_size_for(pce.num_constraints())?;
    let inputs = pce.shape.num_inputs;
    Ok(ParamsLayout {
        ic: inputs,
        h: n - 1,
        l: pce.shape.num_aux,
        a: inputs + pce.a_aux_density.count(),
        b: pce.b_input_density.count() + pce.b_aux_density.count(),
    })
}

/// A setup error, or the sink's own.
type SinkResult<E> = Result<(), Result<SetupError, E>>;

fn generate_into<S: QuerySink>(
    pce: Pce,
    tw: &ToxicWaste,
    progress: Option<Progress>,
    device: Device,
    sink: &mut S,
) -> SinkResult<S::Error> {
    for (name, v) in [("gamma", tw.gamma), ("delta", tw.delta)] {
        if bool::from(v.is_zero()) {
            return Err(Ok(SetupError::ZeroTrapdoor(name)));
        }
    }
    let t = Instant::now();
    let qap = qap::evaluate_at(&pce, tw.tau).map_err(|e| Ok(e.into()))?;
    debug!("setup: QAP of {} constraints at tau in {:?}", pce.num_constraints(), t.elapsed());
    drop(pce);
    queries(qap, tw, progress, device, sink)
}

/// Computes and emits every query of the QAP at τ.
fn queries<S: QuerySink>(qap: QapAtTau, tw: &ToxicWaste, progress: Option<Progress>, device: Device, sink: &mut S) -> SinkResult<S::Error> {
    let n = qap.domain.size();
    let z_tau = tw.tau.pow_vartime([n as u64]) - Fr::ONE;
    if bool::from(z_tau.is_zero()) {
        return Err(Ok(SetupError::TauInDomain));
    }
    let gamma_inv = tw.gamma.invert().unwrap();
    let delta_inv = tw.delta.invert().unwrap();
    let QapAtTau { at_inputs, bt_inputs, ct_inputs, at_aux, bt_aux, ct_aux, .. } = qap;
    // β·u(τ) + α·v(τ) + w(τ), over γ (IC) or δ (L).
    let ext = |a: &Fr, b: &Fr, c: &Fr, inv: Fr| (tw.beta * a + tw.alpha * b + c) * inv;
    let nonzero = |v: &[Fr]| v.iter().filter(|x| !bool::from(x.is_zero())).count();
    let (a_len, b_len) = (nonzero(&at_inputs) + nonzero(&at_aux), nonzero(&bt_inputs) + nonzero(&bt_aux));
    let (h_len, ic_len, l_len) = (n - 1, at_inputs.len(), at_aux.len());
    let g1_total = h_len + ic_len + l_len + a_len + b_len;
    let total = g1_total + b_len;

    let t = Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = |k: usize| {
        let d = done.fetch_add(k, std::sync::atomic::Ordering::Relaxed) + k;
        if let Some(p) = progress {
            p(d, total);
        }
    };
    let g1 = FixedBase::<G1Affine>::new(G1Projective::generator(), g1_total);
    let g2 = FixedBase::<G2Affine>::new(G2Projective::generator(), b_len);
    // Scalars are made one slab at a time, so no query's scalars are held.
    let emit_g1 = |sink: &mut S, len: usize, scalars: &mut dyn Iterator<Item = Fr>| -> SinkResult<S::Error> {
        sink.section(len).map_err(Err)?;
        emit_slabs(scalars, |slab| {
            sink.g1(&g1.mul_many_on(device, slab).map_err(|e| Ok(e.into()))?).map_err(Err)?;
            tick(slab.len());
            Ok(())
        })
    };

    let ic: Vec<Fr> = (0..ic_len).map(|i| ext(&at_inputs[i], &bt_inputs[i], &ct_inputs[i], gamma_inv)).collect();
    let g1_gen = G1Projective::generator();
    let g2_gen = G2Projective::generator();
    let vk = VerifyingKey {
        alpha_g1: (g1_gen * tw.alpha).to_affine(),
        beta_g1: (g1_gen * tw.beta).to_affine(),
        beta_g2: (g2_gen * tw.beta).to_affine(),
        gamma_g2: (g2_gen * tw.gamma).to_affine(),
        delta_g1: (g1_gen * tw.delta).to_affine(),
        delta_g2: (g2_gen * tw.delta).to_affine(),
        ic: g1.mul_many_on(device, &ic).map_err(|e| Ok(e.into()))?,
    };
    tick(ic_len);
    sink.vk(&vk).map_err(Err)?;
    drop(ct_inputs);

    // H: τ^i·Z(τ)/δ.
    let h_scale = z_tau * delta_inv;
    emit_g1(sink, h_len, &mut powers(tw.tau, h_len).map(|p| p * h_scale))?;
    // L: every aux variable must appear somewhere, else its point is the identity.
    let l_scalar = |i: usize| ext(&at_aux[i], &bt_aux[i], &ct_aux[i], delta_inv);
    if let Some(index) = (0..l_len).find(|&i| l_scalar(i).is_zero_vartime()) {
        return Err(Ok(SetupError::UnconstrainedVariable { index }));
    }
    emit_g1(sink, l_len, &mut (0..l_len).map(l_scalar))?;
    drop(ct_aux);
    let nonzero_of =
        |inputs: &[Fr], aux: &[Fr]| -> Vec<Fr> { inputs.iter().chain(aux).copied().filter(|x| !x.is_zero_vartime()).collect() };
    emit_g1(sink, a_len, &mut at_inputs.iter().chain(&at_aux).copied().filter(|x| !x.is_zero_vartime()))?;
    drop((at_inputs, at_aux));
    // B's scalars serve two sections (G1 and G2): held once, then dropped.
    let b = nonzero_of(&bt_inputs, &bt_aux);
    drop((bt_inputs, bt_aux));
    emit_g1(sink, b_len, &mut b.iter().copied())?;
    sink.section(b_len).map_err(Err)?;
    emit_slabs(&mut b.iter().copied(), |slab| -> SinkResult<S::Error> {
        sink.g2(&g2.mul_many_on(device, slab).map_err(|e| Ok(e.into()))?).map_err(Err)?;
        tick(slab.len());
        Ok(())
    })?;
    debug!("setup: {} G1 and {} G2 points in {:?}", g1_total, b_len, t.elapsed());
    Ok(())
}

/// τ^0, τ^1, … (len of them).
fn powers(tau: Fr, len: usize) -> impl Iterator<Item = Fr> {
    std::iter::successors(Some(Fr::ONE), move |p| Some(*p * tau)).take(len)
}

/// Feeds `scalars` to `f` in slabs of [`SLAB`].
fn emit_slabs<E>(scalars: &mut dyn Iterator<Item = Fr>, mut f: impl FnMut(&[Fr]) -> Result<(), E>) -> Result<(), E> {
    let mut slab = Vec::with_capacity(SLAB);
    loop {
        slab.clear();
        slab.extend((&mut *scalars).take(SLAB));
        if slab.is_empty() {
            return Ok(());
        }
        f(&slab)?;
    }
}

/// Collects the parameters in memory.
#[derive(Default)]
struct InMemory {
    vk: Option<VerifyingKey>,
    /// H, L, A, B_G1, in order; the last is the one being filled.
    g1: Vec<Vec<G1Affine>>,
    b_g2: Vec<G2Affine>,
}

impl InMemory {
    fn into_params(self) -> Parameters {
        let [h, l, a, b_g1]: [Vec<G1Affine>; 4] = self.g1.try_into().expect("four G1 sections");
        let vk = self.vk.expect("the verifying key comes first");
        Parameters { host_pin: Default::default(), vk, h, l, a, b_g1, b_g2: self.b_g2 }
    }
}

impl QuerySink for InMemory {
    type Error = std::convert::Infallible;
    fn vk(&mut self, vk: &VerifyingKey) -> Result<(), Self::Error> {
        self.vk = Some(vk.clone());
        Ok(())
    }
    fn section(&mut self, len: usize) -> Result<(), Self::Error> {
        if self.g1.len() < 4 {
            self.g1.push(Vec::with_capacity(len));
        } else {
            self.b_g2.reserve_exact(len);
        }
        Ok(())
    }
    fn g1(&mut self, points: &[G1Affine]) -> Result<(), Self::Error> {
        self.g1.last_mut().expect("a section is open").extend_from_slice(points);
        Ok(())
    }
    fn g2(&mut self, points: &[G2Affine]) -> Result<(), Self::Error> {
        self.b_g2.extend_from_slice(points);
        Ok(())
    }
}

/// Streams the parameters into a `.params` file, keeping the verifying key
/// for the `.vk` file.
struct ToFile {
    stream: ParamsStream,
    vk: Option<VerifyingKey>,
}

impl QuerySink for ToFile {
    type Error = std::io::Error;
    fn vk(&mut self, vk: &VerifyingKey) -> std::io::Result<()> {
        self.vk = Some(vk.clone());
        self.stream.vk(vk)
    }
    fn section(&mut self, len: usize) -> std::io::Result<()> {
        self.stream.section(len)
    }
    fn g1(&mut self, points: &[G1Affine]) -> std::io::Result<()> {
        self.stream.g1(points)
    }
    fn g2(&mut self, points: &[G2Affine]) -> std::io::Result<()> {
        self.stream.g2(points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::CircuitSpec;
    use bellpepper_core::ConstraintSystem;
    use bellperson::groth16 as bp;

    /// bellperson 0.27's parameters for the same toxic waste, as file bytes.
    fn bellperson_bytes<C: Circuit<Fr>>(circuit: C, tw: &ToxicWaste) -> Vec<u8> {
        let (g1, g2) = (G1Projective::generator(), G2Projective::generator());
        let p = bp::generate_parameters::<blstrs::Bls12, _>(circuit, g1, g2, tw.alpha, tw.beta, tw.gamma, tw.delta, tw.tau).unwrap();
        let mut bytes = Vec::new();
        p.write(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn in_memory_and_streamed_match_bellperson_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        // Odd sizes, an exact power of two, many inputs, real gadgets.
        for (seed, spec) in [(1, "synthetic:777:5"), (2, "synthetic:1022:1"), (3, "synthetic:300:40"), (4, "sha256:1"), (5, "mimc:40")] {
            let spec: CircuitSpec = spec.parse().unwrap();
            let tw = ToxicWaste::from_seed(seed);
            let theirs = bellperson_bytes(spec.blank(), &tw);
            let ours = generate_parameters(spec.blank(), &tw, None).unwrap();
            let mut bytes = Vec::new();
            ours.write(&mut bytes).unwrap();
            assert!(bytes == theirs, "{spec}: in-memory parameters differ from bellperson's");
            let (params, vk) = (dir.path().join("p.params"), dir.path().join("p.vk"));
            let pce = crate::pce::record("test", spec.blank()).unwrap();
            let written = write_parameters(pce, &tw, None, Device::Cpu, &params, &vk).unwrap();
            assert!(std::fs::read(&params).unwrap() == theirs, "{spec}: streamed .params differs from bellperson's");
            assert_eq!(std::fs::read(&vk).unwrap(), written.to_bytes(), "{spec}: .vk");
            assert_eq!(written, ours.vk, "{spec}: verifying key");
        }
    }

    #[test]
    fn the_layout_known_before_setup_is_the_file_size() {
        let dir = tempfile::tempdir().unwrap();
        for (seed, spec) in [(1, "synthetic:777:5"), (2, "synthetic:1024:1"), (3, "sha256:1")] {
            let spec: CircuitSpec = spec.parse().unwrap();
            let (params, vk) = (dir.path().join("p.params"), dir.path().join("p.vk"));
            let pce = crate::pce::record("test", spec.blank()).unwrap();
            let layout = params_layout(&pce).unwrap();
            write_parameters(pce, &ToxicWaste::from_seed(seed), None, Device::Cpu, &params, &vk).unwrap();
            assert_eq!(std::fs::metadata(&params).unwrap().len(), layout.file_bytes(), "{spec}");
        }
    }

    #[test]
    fn seeded_toxic_waste_is_reproducible() {
        let (a, b) = (ToxicWaste::from_seed(9), ToxicWaste::from_seed(9));
        assert_eq!((a.alpha, a.beta, a.gamma, a.delta, a.tau), (b.alpha, b.beta, b.gamma, b.delta, b.tau));
        assert_ne!(a.tau, ToxicWaste::from_seed(10).tau);
    }

    /// An aux variable in no constraint.
    struct Unused;
    impl Circuit<Fr> for Unused {
        fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
            let x = cs.alloc(|| "x", || Ok(Fr::ONE))?;
            let _unused = cs.alloc(|| "unused", || Ok(Fr::ONE))?;
            cs.enforce(|| "x*x=x", |lc| lc + x, |lc| lc + x, |lc| lc + x);
            Ok(())
        }
    }

    #[test]
    fn bad_circuits_and_trapdoors_are_named_errors_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let (params, vk) = (dir.path().join("p.params"), dir.path().join("p.vk"));
        let pce = crate::pce::record("unused", Unused).unwrap();
        let err = write_parameters(pce, &ToxicWaste::from_seed(1), None, Device::Cpu, &params, &vk).unwrap_err();
        assert!(matches!(err, SetupError::UnconstrainedVariable { index: 1 }), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a failed setup left files behind");
        let tw = ToxicWaste { delta: Fr::ZERO, ..ToxicWaste::from_seed(2) };
        let err = generate_parameters("synthetic:100".parse::<CircuitSpec>().unwrap().blank(), &tw, None).unwrap_err();
        assert!(matches!(err, SetupError::ZeroTrapdoor("delta")), "{err}");
        let tw = ToxicWaste { tau: Fr::ONE, ..ToxicWaste::from_seed(3) };
        let err = generate_parameters("synthetic:100".parse::<CircuitSpec>().unwrap().blank(), &tw, None).unwrap_err();
        assert!(matches!(err, SetupError::TauInDomain), "{err}");
    }
}
