use super::*;
use crate::circuits::{splitmix, CircuitSpec};
use crate::cs::{generate_witness, synthesize};
use bellpepper_core::{ConstraintSystem, LinearCombination, Variable};
use ff::Field;

/// A random R1CS (not satisfied; a, b, c are just evaluated): repeated
/// variables in one LC, zero coefficients, ±1, small and random
/// coefficients, inputs allocated between aux variables, empty LCs.
#[derive(Clone)]
struct RandomR1cs {
    seed: u64,
    constraints: usize,
    /// Allocate one extra aux variable at the end (a shape mismatch).
    extra_aux: bool,
    /// Allocate the second input after all aux (an order mismatch).
    late_input: bool,
}

impl RandomR1cs {
    fn new(seed: u64, constraints: usize) -> Self {
        RandomR1cs { seed, constraints, extra_aux: false, late_input: false }
    }
}

impl Circuit<Fr> for RandomR1cs {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut rng = self.seed;
        let mut next = move || {
            rng = splitmix(rng);
            rng
        };
        let mut vars: Vec<Variable> = vec![CS::one()];
        // Half the values 0 or 1, as a Filecoin witness's bits are: the
        // SpMV skips their multiplications.
        let value = |x: u64| match x % 4 {
            0 => Fr::ZERO,
            1 => Fr::ONE,
            _ => Fr::from(x % 1000) - Fr::from(500),
        };
        for i in 0..40 {
            let x = next();
            if i == 5 && self.late_input {
                continue;
            }
            if i == 5 || i == 20 {
                vars.push(cs.alloc_input(|| "in", || Ok(value(x)))?);
            } else {
                vars.push(cs.alloc(|| "aux", || Ok(value(x)))?);
            }
        }
        if self.late_input {
            vars.push(cs.alloc_input(|| "late", || Ok(Fr::from(3)))?);
        }
        let coeff = |r: u64| match r % 6 {
            0 => Fr::ONE,
            1 => -Fr::ONE,
            2 => Fr::ZERO,
            3 => Fr::from(2),
            4 => Fr::from(1 << 20),
            _ => crate::circuits::field_from_seed(r),
        };
        for _ in 0..self.constraints {
            let mut lcs: Vec<LinearCombination<Fr>> = Vec::new();
            for _ in 0..3 {
                let mut lc = LinearCombination::zero();
                for _ in 0..next() % 5 {
                    let v = vars[(next() % vars.len() as u64) as usize];
                    lc = lc + (coeff(next()), v);
                }
                lcs.push(lc);
            }
            let (c, b, a) = (lcs.pop().unwrap(), lcs.pop().unwrap(), lcs.pop().unwrap());
            cs.enforce(|| "c", |_| a, |_| b, |_| c);
            if next() % 7 == 0 {
                let x = next();
                vars.push(cs.alloc(|| "mid", || Ok(value(x)))?);
            }
        }
        if self.extra_aux {
            cs.alloc(|| "extra", || Ok(Fr::ONE))?;
        }
        Ok(())
    }
}

/// Independent parts (each uses only the constant one and its own
/// variables); `extend`: an extensible constraint system gets each part
/// synthesized into one of its own and appended, else all go in sequence.
struct Parts {
    parts: Vec<RandomR1cs>,
    extend: bool,
}

impl Circuit<Fr> for Parts {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for part in self.parts {
            if self.extend && CS::is_extensible() {
                let mut own = CS::new();
                own.alloc_input(|| "temp ONE", || Ok(Fr::ONE))?;
                part.synthesize(&mut own)?;
                cs.extend(&own);
            } else {
                part.synthesize(cs)?;
            }
        }
        Ok(())
    }
}

fn parts(extend: bool) -> Parts {
    let mut parts: Vec<RandomR1cs> = (0..4).map(|seed| RandomR1cs::new(10 + seed, 200 + 50 * seed as usize)).collect();
    parts[2].late_input = true;
    Parts { parts, extend }
}

#[test]
fn parts_recorded_apart_and_appended_equal_the_sequential_recording() {
    let sequential = record("parts", parts(false)).unwrap();
    let appended = record("parts", parts(true)).unwrap();
    assert!(sequential.coeffs.len() > 10, "the parts bring coefficients of their own into the table");
    assert!(appended == sequential, "appended parts' R1CS differs from the sequential recording");

    let (pce_seq, w_seq) = record_with_witness("parts", parts(false)).unwrap();
    let (pce_app, w_app) = record_with_witness("parts", parts(true)).unwrap();
    assert!(pce_app == sequential && pce_seq == sequential, "a recording with its witness has another R1CS");
    assert!(w_app == w_seq, "appended parts' witness differs from the sequential one");
    assert_eq!(w_seq.input_assignment.len(), sequential.shape.num_inputs);
    // The appended PCE proves the same assignment as classic synthesis.
    let classic = synthesize(parts(false)).unwrap();
    assert!(appended.synthesize(parts(true)).unwrap() == classic, "appended PCE's assignment differs from classic synthesis");
}

/// Shared variables (aux numbers and bits, an input between them), then
/// parts that read them beside variables and inputs of their own.
struct SharedParts {
    seed: u64,
    parts: usize,
}

impl SharedParts {
    const SHARED: usize = 6;
    /// Rows before the parts': the bit's.
    const ROWS: usize = 1;

    fn value(&self, i: u64) -> Fr {
        Fr::from(splitmix(self.seed ^ i) % 3)
    }

    /// The shared aux variables (the input is not read by the parts).
    fn shared<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<Vec<Variable>, SynthesisError> {
        let mut vars = Vec::new();
        for i in 0..Self::SHARED as u64 {
            if i == 2 {
                cs.alloc_input(|| "shared input", || Ok(self.value(100)))?;
            }
            vars.push(cs.alloc(|| "shared", || Ok(self.value(i)))?);
        }
        // A booleanity row among the shared ones, as a bit's allocation has.
        cs.enforce(|| "bit", |lc| lc + CS::one() - vars[1], |lc| lc + vars[1], |lc| lc);
        Ok(vars)
    }

    fn part<CS: ConstraintSystem<Fr>>(&self, k: usize, cs: &mut CS, shared: &[Variable]) -> Result<(), SynthesisError> {
        let mut rng = splitmix(self.seed + k as u64);
        let mut next = move || {
            rng = splitmix(rng);
            rng
        };
        let mut own = Vec::new();
        for i in 0..20 {
            let x = next();
            own.push(if i == 7 { cs.alloc_input(|| "in", || Ok(Fr::from(x % 5)))? } else { cs.alloc(|| "aux", || Ok(Fr::from(x % 5)))? });
        }
        let coeff = |r: u64| [Fr::ONE, -Fr::ONE, Fr::from(2), Fr::from(3 + k as u64)][(r % 4) as usize];
        for _ in 0..30 {
            let mut lcs: [LinearCombination<Fr>; 3] = Default::default();
            for lc in lcs.iter_mut() {
                for _ in 0..(next() % 4) {
                    let r = next();
                    let v = if r % 2 == 0 { shared[(r / 2) as usize % shared.len()] } else { own[(r / 2) as usize % own.len()] };
                    *lc = lc.clone() + (coeff(r >> 8), v);
                }
            }
            let [a, b, c] = lcs;
            cs.enforce(|| "row", |_| a, |_| b, |_| c);
        }
        Ok(())
    }
}

impl Circuit<Fr> for SharedParts {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let shared = self.shared(cs)?;
        (0..self.parts).try_for_each(|k| self.part(k, cs, &shared))
    }
}

/// `c` recorded with each part apart, standing in for the shared variables.
fn record_apart<const W: bool>(c: &SharedParts) -> (Pce, Option<crate::cs::WitnessOnly>) {
    super::record::recorded(Recorder::<W>::new(), "shared", |cs| {
        let shared = c.shared(cs)?;
        for k in 0..c.parts {
            // With the bit's booleanity row again, as a bit's stand-in has
            // (not appended: the parent has it).
            let stand_ins = |own: &mut Recorder<W>| {
                let vars = (0..SharedParts::SHARED as u64).map(|i| own.alloc(|| "", || Ok(c.value(i)))).collect::<Result<Vec<_>, _>>()?;
                own.enforce(|| "bit", |lc| lc + Recorder::<W>::one() - vars[1], |lc| lc + vars[1], |lc| lc);
                Ok(vars)
            };
            let (mut part, read_as) = Part::new(shared.clone(), stand_ins)?;
            c.part(k, part.cs(), &read_as)?;
            cs.append_part(part);
        }
        Ok(())
    })
    .unwrap()
}

#[test]
fn parts_standing_in_for_shared_variables_append_as_the_sequential_recording() {
    for seed in [1, 2, 3] {
        let c = || SharedParts { seed, parts: 4 };
        let sequential = record("shared", c()).unwrap();
        assert!(record_apart::<false>(&c()).0 == sequential, "seed {seed}: R1CS recorded apart differs");
        let (pce, witness) = record_apart::<true>(&c());
        let (_, sequential_witness) = record_with_witness("shared", c()).unwrap();
        assert!(pce == sequential, "seed {seed}: R1CS recorded apart with its witness differs");
        assert!(witness.unwrap() == sequential_witness, "seed {seed}: witness recorded apart differs");
        // Not vacuous: the parts' rows read the shared variables.
        let first_shared = sequential.shape.num_inputs as u32;
        let rows_of_parts = |m: &SparseMatrix| m.cols[m.row_ptr[SharedParts::ROWS] as usize..].to_vec();
        assert!(rows_of_parts(&sequential.a).iter().any(|col| (first_shared..first_shared + SharedParts::SHARED as u32).contains(col)));
    }
}

#[test]
#[should_panic(expected = "aux variables in allocation order")]
fn a_part_refuses_imports_out_of_allocation_order() {
    let mut cs = Recorder::<false>::new();
    let (x, y) = (cs.alloc(|| "x", || Ok(Fr::ONE)).unwrap(), cs.alloc(|| "y", || Ok(Fr::ONE)).unwrap());
    let _ = Part::<false>::new(vec![y, x], |own| {
        own.alloc(|| "", || Ok(Fr::ONE))?;
        own.alloc(|| "", || Ok(Fr::ONE))
    });
}

fn builtin_specs() -> Vec<CircuitSpec> {
    vec![
        CircuitSpec::Sha256 { blocks: 1 },
        CircuitSpec::Mimc { hashes: 3 },
        CircuitSpec::Synthetic { constraints: 5000, inputs: 8 },
        CircuitSpec::Synthetic { constraints: 20, inputs: 1 },
    ]
}

#[test]
fn pce_assignment_equals_classic_on_random_r1cs() {
    for seed in [1, 2, 3] {
        let pce = record("random", RandomR1cs::new(seed, 3000)).unwrap();
        assert!(pce.coeffs.len() > 10, "random coefficients deduplicated into the table");
        let classic = synthesize(RandomR1cs::new(seed, 3000)).unwrap();
        let ours = pce.synthesize(RandomR1cs::new(seed, 3000)).unwrap();
        assert!(ours == classic, "seed {seed}: PCE assignment differs from classic synthesis");
    }
}

#[test]
fn spmv_on_several_threads_equals_one_thread() {
    // 3000 rows with 4096 rows per thread minimum would run on one thread:
    // a larger circuit splits into several chunks.
    let pce = record("random", RandomR1cs::new(9, 20_000)).unwrap();
    let w = generate_witness(RandomR1cs::new(9, 20_000)).unwrap();
    let classic = synthesize(RandomR1cs::new(9, 20_000)).unwrap();
    let (a, b, c) = spmv::evaluate(&pce, &w.input_assignment, &w.aux_assignment);
    assert!(a == classic.a && b == classic.b && c == classic.c);
}

#[test]
fn pce_assignment_equals_classic_on_builtin_circuits() {
    for spec in builtin_specs() {
        let pce = record(&spec.to_string(), spec.blank()).unwrap();
        assert_eq!(pce.num_constraints(), synthesize(spec.instance(1)).unwrap().num_constraints());
        for seed in [1, 2] {
            let classic = synthesize(spec.instance(seed)).unwrap();
            let ours = pce.synthesize(spec.instance(seed)).unwrap();
            assert!(ours == classic, "{spec} seed {seed}: PCE assignment differs from classic synthesis");
        }
        // Recording an instance gives the same PCE as recording the blank circuit.
        assert!(record(&spec.to_string(), spec.instance(5)).unwrap() == pce, "{spec}");
    }
}

#[test]
fn file_round_trip() {
    let spec = CircuitSpec::Synthetic { constraints: 3000, inputs: 4 };
    let pce = record("builtin-synthetic-3000-4", spec.blank()).unwrap();
    let bytes = file::to_bytes(&pce);
    assert!(file::from_bytes(&bytes).unwrap() == pce);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.pce");
    file::write(&pce, &path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "write and to_bytes agree");
    assert!(file::read(&path).unwrap() == pce);
    let random = record("random", RandomR1cs::new(4, 500)).unwrap();
    assert!(file::from_bytes(&file::to_bytes(&random)).unwrap() == random);
}

#[test]
fn truncated_altered_stale_files_refused() {
    let pce = record("random", RandomR1cs::new(5, 400)).unwrap();
    let bytes = file::to_bytes(&pce);
    for cut in [0, 4, 20, 60, bytes.len() / 2, bytes.len() - 1] {
        let err = file::from_bytes(&bytes[..cut]).unwrap_err();
        assert!(matches!(err, PceError::Size { .. } | PceError::NotPce), "cut at {cut}: {err}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(file::from_bytes(&longer).unwrap_err(), PceError::Size { .. }));
    // Any byte of the body or the checksum altered.
    for at in [100, bytes.len() / 2, bytes.len() - 40, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let err = file::from_bytes(&bad).unwrap_err();
        assert!(matches!(err, PceError::Checksum), "byte {at}: {err}");
    }
    let mut stale = bytes.clone();
    stale[8] = file::VERSION as u8 + 1;
    let err = file::from_bytes(&stale).unwrap_err();
    assert!(matches!(err, PceError::Version { .. }), "{err}");
    assert!(err.to_string().contains("stale"));
    let mut not_pce = bytes.clone();
    not_pce[0] = b'X';
    assert!(matches!(file::from_bytes(&not_pce).unwrap_err(), PceError::NotPce));
}

/// A file's sizes from its header alone: those of the PCE it holds, and
/// refused where the header says the file is not that circuit's PCE of
/// this version and length (the body's checksum is left to `read`).
#[test]
fn a_files_sizes_come_from_its_header_alone() {
    let pce = record("random", RandomR1cs::new(5, 400)).unwrap();
    let bytes = file::to_bytes(&pce);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.pce");
    let sizes = |bytes: &[u8], id: &str| {
        std::fs::write(&path, bytes).unwrap();
        file::read_sizes(&path, id)
    };
    let read = sizes(&bytes, "random").unwrap();
    assert_eq!(read, pce.sizes());
    assert_eq!((read.num_constraints, read.num_vars), (pce.num_constraints(), pce.shape.num_vars()));
    assert_eq!(read.z_bytes(), pce.z_bytes());
    // An altered body: the header's sizes all the same (read refuses it).
    let mut body = bytes.clone();
    body[bytes.len() / 2] ^= 0x10;
    assert_eq!(sizes(&body, "random").unwrap(), pce.sizes());
    assert!(matches!(sizes(&bytes, "other").unwrap_err(), PceError::CircuitId { .. }));
    assert!(matches!(sizes(&bytes[..bytes.len() - 1], "random").unwrap_err(), PceError::Size { .. }));
    assert!(matches!(sizes(&bytes[..20], "random").unwrap_err(), PceError::Size { .. }));
    let mut stale = bytes.clone();
    stale[8] = file::VERSION as u8 + 1;
    assert!(matches!(sizes(&stale, "random").unwrap_err(), PceError::Version { .. }));
    assert!(matches!(sizes(b"XUZKPCE", "random").unwrap_err(), PceError::NotPce));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(file::read_sizes(&path, "random").unwrap_err(), PceError::Io { .. }));
}

#[test]
fn arrays_of_several_pieces_round_trip_and_every_piece_is_checked() {
    // One row of A with enough entries that its columns and coefficient
    // indices span two pieces each (the checksum's pieces are read and
    // hashed apart).
    let n = file::PIECE / 4 + 1000;
    let row = |nnz: u32| SparseMatrix { row_ptr: vec![0, nnz], cols: vec![0; nnz as usize], coeff_idx: vec![0; nnz as usize] };
    let mut a = row(n as u32);
    a.cols[n - 1] = 1;
    a.coeff_idx[n - 1] = 1;
    let shape = Shape { num_inputs: 1, num_aux: 1, input_order: 7 };
    let pce = Pce::from_parts("pieces".into(), shape, vec![Fr::ONE, -Fr::ONE], a, row(0), row(0)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pieces.pce");
    file::write(&pce, &path).unwrap();
    assert!(file::read(&path).unwrap() == pce);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, file::to_bytes(&pce), "write and to_bytes agree");
    // A byte of the second piece of A's columns, and the last of its
    // coefficient indices, altered.
    // From the end: the checksum, C's and B's row pointers (2 each).
    let a_end = bytes.len() - 32 - 4 * 4;
    let cols_at = a_end - 8 * n;
    for at in [cols_at + file::PIECE + 10, a_end - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(file::read(&path).unwrap_err(), PceError::Checksum), "byte {at}");
    }
}

#[test]
fn out_of_range_indices_refused_even_with_a_valid_checksum() {
    let mut pce = record("random", RandomR1cs::new(6, 300)).unwrap();
    let vars = (pce.shape.num_inputs + pce.shape.num_aux) as u32;
    pce.b.cols[0] = vars;
    let err = file::from_bytes(&file::to_bytes(&pce)).unwrap_err();
    assert!(matches!(err, PceError::Malformed(ref m) if m.contains("column")), "{err}");
    let mut pce = record("random", RandomR1cs::new(6, 300)).unwrap();
    pce.c.coeff_idx[0] = pce.coeffs.len() as u32;
    let err = file::from_bytes(&file::to_bytes(&pce)).unwrap_err();
    assert!(matches!(err, PceError::Malformed(ref m) if m.contains("coefficient")), "{err}");
}

#[test]
fn mismatching_allocation_refused() {
    let pce = record("random", RandomR1cs::new(7, 200)).unwrap();
    let extra = RandomR1cs { extra_aux: true, ..RandomR1cs::new(7, 200) };
    let err = pce.synthesize(extra).unwrap_err();
    assert!(matches!(err, PceError::ShapeMismatch { what, .. } if what.contains("aux")), "{err}");
    // Same counts, inputs allocated at other places.
    let late = RandomR1cs { late_input: true, ..RandomR1cs::new(7, 200) };
    let err = pce.synthesize(late).unwrap_err();
    assert!(matches!(err, PceError::ShapeMismatch { what, .. } if what.contains("order")), "{err}");
    // Another circuit entirely.
    let spec = CircuitSpec::Synthetic { constraints: 200, inputs: 2 };
    assert!(matches!(pce.synthesize(spec.instance(1)).unwrap_err(), PceError::ShapeMismatch { .. }));
}

#[test]
fn check_satisfied_names_the_first_unsatisfied_constraint() {
    // Enough constraints for several threads' ranges.
    let spec = CircuitSpec::Synthetic { constraints: 70_000, inputs: 4 };
    let pce = record(&spec.to_string(), spec.blank()).unwrap();
    let mut pa = pce.synthesize(spec.instance(3)).unwrap();
    pce.check_satisfied(&pa).unwrap();
    let n = pce.num_constraints();
    for r in [n - 1, n / 2, 1] {
        pa.c[r] += Fr::ONE;
        let err = pce.check_satisfied(&pa).unwrap_err();
        assert!(matches!(err, PceError::Unsatisfied { constraint, .. } if constraint == r), "{err}");
    }
    for spec in builtin_specs() {
        let pce = record(&spec.to_string(), spec.blank()).unwrap();
        pce.check_satisfied(&pce.synthesize(spec.instance(2)).unwrap()).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
    let pce = record("random", RandomR1cs::new(4, 3000)).unwrap();
    let err = pce.check_satisfied(&pce.synthesize(RandomR1cs::new(4, 3000)).unwrap()).unwrap_err();
    assert!(matches!(err, PceError::Unsatisfied { .. }), "a random R1CS is not satisfied: {err}");
}

/// The same assignment with its a, b, c left to compute (as
/// [`Pce::witness_assignment`] gives it).
fn witness_only(pa: &ProvingAssignment) -> ProvingAssignment {
    ProvingAssignment { a: Vec::new(), b: Vec::new(), c: Vec::new(), ..pa.clone() }
}

/// A witness-only assignment is checked row by row from its witness:
/// the same verdict, naming the same constraint, as the check of a, b, c
/// held in full, for satisfying witnesses and for ones that do not
/// satisfy (a changed witness value, a PCE with a changed constraint, a
/// random R1CS).
#[test]
fn check_satisfied_from_the_witness_alone_agrees_with_a_b_c_held() {
    let same_verdict = |pce: &Pce, pa: &ProvingAssignment| {
        let wo = witness_only(pa);
        assert!(wo.abc_deferred());
        let (held, streamed) = (pce.check_satisfied(pa), pce.check_satisfied(&wo));
        assert_eq!(format!("{held:?}"), format!("{streamed:?}"));
        streamed
    };
    // Enough constraints for several threads' ranges.
    let spec = CircuitSpec::Synthetic { constraints: 70_000, inputs: 4 };
    let pce = record(&spec.to_string(), spec.blank()).unwrap();
    let pa = pce.synthesize(spec.instance(3)).unwrap();
    same_verdict(&pce, &pa).unwrap();
    // One aux value changed: whatever constraints it breaks, the first is
    // named by both.
    for k in [pa.aux_assignment.len() - 1, pa.aux_assignment.len() / 2, 0] {
        let mut changed = pa.clone();
        changed.aux_assignment[k] += Fr::ONE;
        (changed.a, changed.b, changed.c) = pce.abc(&changed);
        if let Err(e) = same_verdict(&pce, &changed) {
            assert!(matches!(e, PceError::Unsatisfied { .. }), "{e}");
        }
    }
    // One constraint of the PCE changed (C scaled by 2): the witness
    // satisfies every constraint but that one.
    let n = pce.num_constraints();
    let row = (0..n).rev().find(|&r| pa.c[r] != Fr::ZERO).unwrap();
    let mut coeffs = pce.coeffs.clone();
    let mut c = pce.c.clone();
    for k in c.row_ptr[row] as usize..c.row_ptr[row + 1] as usize {
        coeffs.push(coeffs[c.coeff_idx[k] as usize].double());
        c.coeff_idx[k] = (coeffs.len() - 1) as u32;
    }
    let changed = Pce::from_parts(pce.circuit_id.clone(), pce.shape, coeffs, pce.a.clone(), pce.b.clone(), c).unwrap();
    let mut held = pa.clone();
    (held.a, held.b, held.c) = changed.abc(&held);
    let err = same_verdict(&changed, &held).unwrap_err();
    assert!(matches!(err, PceError::Unsatisfied { constraint, .. } if constraint == row), "{err}");
    for spec in builtin_specs() {
        let pce = record(&spec.to_string(), spec.blank()).unwrap();
        same_verdict(&pce, &pce.synthesize(spec.instance(2)).unwrap()).unwrap_or_else(|e| panic!("{spec}: {e}"));
    }
    let pce = record("random", RandomR1cs::new(4, 3000)).unwrap();
    let err = same_verdict(&pce, &pce.synthesize(RandomR1cs::new(4, 3000)).unwrap()).unwrap_err();
    assert!(matches!(err, PceError::Unsatisfied { .. }), "a random R1CS is not satisfied: {err}");
}

#[test]
fn densities_marked_on_threads_equal_a_serial_marking() {
    // Over 2^22 columns: more than one chunk on any machine with two cores.
    let (ni, na) = (70, 1_000_003);
    let mut rng = 17u64;
    let cols: Vec<u32> = (0..(1 << 22) + 777)
        .map(|k| {
            rng = splitmix(rng);
            // Some aux never touched, the inputs often.
            if k % 5 == 0 {
                (rng % ni as u64) as u32
            } else {
                (ni as u64 + rng % (na as u64 - 1000)) as u32
            }
        })
        .collect();
    let (inputs, aux) = densities(&cols, ni, na);
    let (mut want_in, mut want_aux) = (Density::zeros(ni), Density::zeros(na));
    for &c in &cols {
        let c = c as usize;
        if c < ni {
            want_in.set(c)
        } else {
            want_aux.set(c - ni)
        }
    }
    assert!(inputs == want_in && aux == want_aux);
    assert!(aux.count() < na && inputs.count() == ni);
}
