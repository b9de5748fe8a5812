//! The witness of parts generated on threads is the sequential witness,
//! byte for byte: in place into a `WitnessOnly` (its room reserved or not,
//! parts of one shape or not), appended into another witness generator.

use super::{witness_on_threads, WitnessPart};
use crate::cs::WitnessOnly;
use bellpepper::util_cs::witness_cs::WitnessCS;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;

/// A part of a circuit: `aux` aux values, some allocated one by one and
/// some handed over in batches as the witness gadgets do (across its room's
/// end when it is larger than expected), a public input before each aux
/// value named in `inputs_at`.
#[derive(Clone)]
struct Toy {
    seed: u64,
    aux: usize,
    inputs_at: Vec<usize>,
    fail: bool,
}

impl Toy {
    fn new(seed: u64, aux: usize, inputs_at: &[usize]) -> Self {
        Toy { seed, aux, inputs_at: inputs_at.to_vec(), fail: false }
    }

    fn value(&self, j: usize) -> Fr {
        Fr::from(self.seed * 1_000_003 + j as u64).square()
    }

    fn synthesize<CS: ConstraintSystem<Fr>>(&self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut j = 0;
        while j < self.aux {
            if self.fail && j >= self.aux / 2 {
                return Err(SynthesisError::AssignmentMissing);
            }
            let input = |j: usize| -> Fr { self.value(j) + Fr::ONE };
            if self.inputs_at.contains(&j) {
                cs.alloc_input(|| "input", || Ok(input(j)))?;
            }
            // Every fourth stretch in one batch, up to the next input.
            let next_input = self.inputs_at.iter().copied().filter(|&at| at > j).min().unwrap_or(self.aux);
            let batch = (next_input - j).min(7);
            if j.is_multiple_of(4) && batch > 1 {
                let values: Vec<Fr> = (j..j + batch).map(|k| self.value(k)).collect();
                cs.extend_aux(&values);
                j += batch;
            } else {
                cs.alloc(|| "aux", || Ok(self.value(j)))?;
                j += 1;
            }
        }
        if self.inputs_at.contains(&self.aux) {
            cs.alloc_input(|| "last input", || Ok(self.value(self.aux) + Fr::ONE))?;
        }
        Ok(())
    }
}

/// What the circuit allocates before its parts.
const SHARED: Toy = Toy { seed: 999, aux: 13, inputs_at: Vec::new(), fail: false };

fn shared<CS: ConstraintSystem<Fr>>(cs: &mut CS) {
    cs.alloc_input(|| "one", || Ok(Fr::ONE)).unwrap();
    SHARED.synthesize(cs).unwrap();
    cs.alloc_input(|| "shared input", || Ok(Fr::from(5))).unwrap();
    cs.alloc(|| "after", || Ok(Fr::from(6))).unwrap();
}

/// The witness of one sequential synthesis.
fn sequential(parts: &[Toy]) -> WitnessOnly {
    let mut w = WitnessOnly::new();
    shared(&mut w);
    for (i, p) in parts.iter().enumerate() {
        p.synthesize(&mut w.namespace(|| format!("part_{i}"))).unwrap();
    }
    w
}

/// The parts on `threads` threads into `w`, after the shared values.
fn on_threads(mut w: WitnessOnly, parts: &[Toy], threads: usize) -> Result<WitnessOnly, SynthesisError> {
    shared(&mut w);
    witness_on_threads(&mut w, parts.to_vec(), threads, |i, p, cs: &mut WitnessPart<'_>| {
        p.synthesize(&mut cs.namespace(|| format!("part_{i}")))
    })?;
    Ok(w)
}

/// Room for the shared values and `aux` more, as a PCE's shape reserves it.
fn reserved(aux: usize) -> WitnessOnly {
    let mut shape = WitnessOnly::new();
    shared(&mut shape);
    WitnessOnly::with_capacity(shape.input_assignment.len() + 8, shape.aux_assignment.len() + aux)
}

fn equal_parts(n: usize) -> Vec<Toy> {
    (0..n).map(|i| Toy::new(i as u64, 101, &[0, 40, 41, 101])).collect()
}

#[test]
fn equal_parts_in_place_as_sequential() {
    for n in [1, 2, 3, 5, 7] {
        let parts = equal_parts(n);
        let expected = sequential(&parts);
        for threads in [1, 2, 3, 4] {
            // The engine's case: room reserved for the circuit's shape; the
            // parts are written in the reserved buffer, which stays the
            // witness's.
            let room = reserved(n * 101);
            let buffer = room.aux_assignment.as_ptr();
            let w = on_threads(room, &parts, threads).unwrap();
            assert!(w == expected, "{n} parts, {threads} threads, room reserved: witness differs");
            assert_eq!(w.aux_assignment.as_ptr(), buffer, "{n} parts, {threads} threads: written in place");
            // Nothing reserved: the first part's size, learned.
            let w = on_threads(WitnessOnly::new(), &parts, threads).unwrap();
            assert!(w == expected, "{n} parts, {threads} threads, nothing reserved: witness differs");
        }
    }
}

#[test]
fn in_place_through_a_namespace() {
    let parts = equal_parts(3);
    let expected = sequential(&parts);
    let mut w = reserved(3 * 101);
    shared(&mut w);
    let mut ns = w.namespace(|| "outer");
    witness_on_threads(&mut ns, parts, 2, |i, p, cs| p.synthesize(&mut cs.namespace(|| format!("part_{i}")))).unwrap();
    drop(ns);
    assert!(w == expected);
}

/// Parts of another shape than the one expected (the first part's, or an
/// even share of the room reserved): the same witness, appended from the
/// first part that misses its room on.
#[test]
fn parts_of_unequal_shape_as_sequential() {
    let shapes: [(&str, Vec<Toy>); 4] = [
        ("a larger part", vec![Toy::new(0, 50, &[3]), Toy::new(1, 50, &[3]), Toy::new(2, 61, &[3, 55]), Toy::new(3, 50, &[3])]),
        ("a smaller part", vec![Toy::new(0, 50, &[3]), Toy::new(1, 38, &[]), Toy::new(2, 50, &[3]), Toy::new(3, 50, &[3])]),
        ("the last part", vec![Toy::new(0, 50, &[0]), Toy::new(1, 50, &[0]), Toy::new(2, 50, &[0]), Toy::new(3, 9, &[9])]),
        ("the first part", vec![Toy::new(0, 20, &[20]), Toy::new(1, 50, &[0]), Toy::new(2, 50, &[0])]),
    ];
    for (what, parts) in shapes {
        let expected = sequential(&parts);
        let n = parts.len();
        for threads in [1, 2, 3] {
            let w = on_threads(WitnessOnly::new(), &parts, threads).unwrap();
            assert!(w == expected, "{what}, {threads} threads, nothing reserved: witness differs");
            // Room for parts of the first's size: it divides evenly.
            let w = on_threads(reserved(n * parts[0].aux), &parts, threads).unwrap();
            assert!(w == expected, "{what}, {threads} threads, room for the first part's size: witness differs");
        }
    }
    // A reservation that is not the circuit's (a PCE of another revision):
    // too much room, evenly shared, and too little.
    let parts = equal_parts(3);
    let expected = sequential(&parts);
    for aux in [3 * 110, 3 * 90, 3 * 101 + 1] {
        for threads in [1, 2, 3] {
            let w = on_threads(reserved(aux), &parts, threads).unwrap();
            assert!(w == expected, "room for {aux} aux values, {threads} threads: witness differs");
        }
    }
}

#[test]
fn a_failing_part_fails_the_witness() {
    let mut parts = equal_parts(5);
    parts[3].fail = true;
    for threads in [1, 2, 3] {
        for room in [WitnessOnly::new(), reserved(5 * 101)] {
            let e = on_threads(room, &parts, threads).map(|_| ()).unwrap_err();
            assert!(matches!(e, SynthesisError::AssignmentMissing), "{threads} threads: {e:?}");
        }
    }
}

/// Another witness generator gets the parts appended.
#[test]
fn appended_into_another_witness_generator() {
    let parts = equal_parts(5);
    let expected = sequential(&parts);
    for threads in [1, 2, 3] {
        let mut cs = WitnessCS::<Fr>::new(); // holds the one input
        SHARED.synthesize(&mut cs).unwrap();
        cs.alloc_input(|| "shared input", || Ok(Fr::from(5))).unwrap();
        cs.alloc(|| "after", || Ok(Fr::from(6))).unwrap();
        witness_on_threads(&mut cs, parts.clone(), threads, |_, p, part| p.synthesize(part)).unwrap();
        assert_eq!(cs.scalar_inputs(), expected.input_assignment, "{threads} threads: inputs");
        assert!(cs.scalar_aux() == expected.aux_assignment, "{threads} threads: aux differ");
    }
}
