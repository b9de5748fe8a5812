//! The recording constraint system: one synthesis gives the circuit's
//! R1CS as a [`Pce`]; from a blank circuit (allocation closures are not
//! called), or from an instance whose witness is kept in the same pass.
//!
//! It is extensible, as bellperson's prover is: a circuit whose parts
//! share nothing but the constant one (a PoSt partition's sectors)
//! records them into recorders of their own on several threads and
//! appends them, which gives the sequential recording exactly. Parts that
//! read variables allocated before them (a PoRep partition's challenges
//! read the replica id and the commitments) are recorded as a [`Part`]:
//! stand-ins for those variables first, written back as the parent's
//! variables when the part is appended.

use super::{input_order_hash, Pce, PceError, Shape, SparseMatrix, COEFF_MINUS_ONE, COEFF_ONE};
use crate::cs::WitnessOnly;
use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::Field;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// While recording, an aux column is tagged with this bit (the input
/// count, which aux columns are offset by, is known only at the end).
const AUX_TAG: u32 = 1 << 31;

/// Records constraints as sparse rows; see [`record`]. `WITNESS`: the
/// assignment is kept too (a type parameter, so that the recorders an
/// extensible circuit makes with `ConstraintSystem::new` for its parts
/// keep it as well).
pub struct Recorder<const WITNESS: bool> {
    num_inputs: usize,
    num_aux: usize,
    input_positions: Vec<usize>,
    coeffs: Vec<Fr>,
    coeff_index: HashMap<[u64; 4], u32, BuildHasherDefault<LimbHasher>>,
    minus_one: Fr,
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    /// The first index that did not fit in 32 bits (enforce cannot fail,
    /// so it is reported when recording ends).
    overflow: Option<String>,
    /// The assignment, when `WITNESS`.
    witness: Option<WitnessOnly>,
}

impl<const WITNESS: bool> Recorder<WITNESS> {
    fn coeff(&mut self, c: &Fr) -> u32 {
        if *c == Fr::ONE {
            return COEFF_ONE;
        }
        if *c == self.minus_one {
            return COEFF_MINUS_ONE;
        }
        // Montgomery form is one-to-one: its limbs are a key without
        // converting out of it (`to_repr`) for every term.
        let key = blst::blst_fr::from(*c).l;
        if let Some(&i) = self.coeff_index.get(&key) {
            return i;
        }
        let i = self.coeffs.len() as u32;
        self.coeffs.push(*c);
        self.coeff_index.insert(key, i);
        i
    }

    /// Appends one row: the LC's non-zero terms (bellpepper merges a
    /// variable's repeated terms, so each column appears once).
    fn push_row(&mut self, which: usize, lc: &LinearCombination<Fr>) {
        let mut entries: Vec<(u32, u32)> = Vec::new();
        for (&i, coeff) in lc.iter_inputs() {
            if !bool::from(coeff.is_zero()) {
                let ci = self.coeff(coeff);
                entries.push((self.column(i, 0), ci));
            }
        }
        for (&i, coeff) in lc.iter_aux() {
            if !bool::from(coeff.is_zero()) {
                let ci = self.coeff(coeff);
                entries.push((self.column(i, AUX_TAG), ci));
            }
        }
        let m = match which {
            0 => &mut self.a,
            1 => &mut self.b,
            _ => &mut self.c,
        };
        for (col, ci) in entries {
            m.cols.push(col);
            m.coeff_idx.push(ci);
        }
        match u32::try_from(m.cols.len()) {
            Ok(n) => m.row_ptr.push(n),
            Err(_) => {
                m.row_ptr.push(u32::MAX);
                self.overflow.get_or_insert_with(|| "more than 2^32 - 1 entries in one matrix".into());
            }
        }
    }

    fn column(&mut self, i: usize, tag: u32) -> u32 {
        if i >= AUX_TAG as usize {
            self.overflow.get_or_insert_with(|| format!("variable index {i} needs more than 31 bits"));
            return tag;
        }
        i as u32 | tag
    }

    /// Ends the recording: aux columns move after the inputs.
    fn finish(mut self, circuit_id: String) -> Result<Pce, PceError> {
        if let Some(why) = self.overflow {
            return Err(PceError::TooLarge(why));
        }
        if self.num_inputs as u64 + self.num_aux as u64 > u32::MAX as u64 {
            return Err(PceError::TooLarge(format!("{} inputs + {} aux exceed 2^32 columns", self.num_inputs, self.num_aux)));
        }
        let ni = self.num_inputs as u32;
        for m in [&mut self.a, &mut self.b, &mut self.c] {
            for col in m.cols.iter_mut() {
                if *col & AUX_TAG != 0 {
                    *col = (*col & !AUX_TAG) + ni;
                }
            }
        }
        let shape = Shape { num_inputs: self.num_inputs, num_aux: self.num_aux, input_order: input_order_hash(&self.input_positions) };
        Pce::from_parts(circuit_id, shape, self.coeffs, self.a, self.b, self.c)
    }
}

impl<const WITNESS: bool> ConstraintSystem<Fr> for Recorder<WITNESS> {
    type Root = Self;

    fn new() -> Self {
        let empty = || SparseMatrix { row_ptr: vec![0], cols: Vec::new(), coeff_idx: Vec::new() };
        Recorder {
            num_inputs: 0,
            num_aux: 0,
            input_positions: Vec::new(),
            coeffs: vec![Fr::ONE, -Fr::ONE],
            coeff_index: HashMap::default(),
            minus_one: -Fr::ONE,
            a: empty(),
            b: empty(),
            c: empty(),
            overflow: None,
            witness: WITNESS.then(WitnessOnly::default),
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Some(w) = self.witness.as_mut() {
            w.aux_assignment.push(f()?);
        }
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        if let Some(w) = self.witness.as_mut() {
            w.input_assignment.push(f()?);
            w.input_positions.push(self.num_aux);
        }
        self.input_positions.push(self.num_aux);
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.push_row(0, &a(LinearCombination::zero()));
        self.push_row(1, &b(LinearCombination::zero()));
        self.push_row(2, &c(LinearCombination::zero()));
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    /// Appends a part recorded on its own ([`Recorder::append`] with no
    /// stand-ins).
    fn extend(&mut self, other: &Self) {
        self.append(other, &[], 0);
    }
}

impl<const WITNESS: bool> Recorder<WITNESS> {
    /// Appends `part` without its first `skip_rows` rows: its first input
    /// is its own constant one (ours); its first `imports.len()` aux
    /// variables stand in for `imports` (our variables) and are written as
    /// them; its other inputs and aux variables follow ours, its rows
    /// follow ours, its coefficients join our table.
    fn append(&mut self, part: &Self, imports: &[Variable], skip_rows: usize) {
        let (inputs, aux, stand_ins) = (self.num_inputs as u32, self.num_aux as u32, imports.len());
        let imported: Vec<u32> = imports
            .iter()
            .map(|v| match v.get_unchecked() {
                Index::Input(i) => i as u32,
                Index::Aux(i) => i as u32 | AUX_TAG,
            })
            .collect();
        let coeff_map: Vec<u32> = part.coeffs.iter().map(|c| self.coeff(c)).collect();
        // Wrapping: an index past 31 bits is reported below from the counts.
        let column = |col: u32| match col {
            0 => 0,
            c if c & AUX_TAG != 0 => match imported.get((c & !AUX_TAG) as usize) {
                Some(&ours) => ours,
                None => (c & !AUX_TAG).wrapping_sub(stand_ins as u32).wrapping_add(aux) | AUX_TAG,
            },
            c => c.wrapping_add(inputs).wrapping_sub(1) & !AUX_TAG,
        };
        for (m, o) in [&mut self.a, &mut self.b, &mut self.c].into_iter().zip([&part.a, &part.b, &part.c]) {
            let from = o.row_ptr[skip_rows];
            let base = m.cols.len() as u64;
            let entries = from as usize..o.cols.len();
            m.cols.extend(o.cols[entries.clone()].iter().map(|&c| column(c)));
            m.coeff_idx.extend(o.coeff_idx[entries].iter().map(|&i| coeff_map[i as usize]));
            if m.cols.len() as u64 > u32::MAX as u64 {
                self.overflow.get_or_insert_with(|| "more than 2^32 - 1 entries in one matrix".into());
            }
            m.row_ptr.extend(o.row_ptr[skip_rows + 1..].iter().map(|&end| (base + (end - from) as u64).min(u32::MAX as u64) as u32));
        }
        if let Some(why) = &part.overflow {
            self.overflow.get_or_insert_with(|| why.clone());
        }
        // A part allocates its inputs after its stand-ins.
        let position = |at: usize| at - stand_ins + self.num_aux;
        if let (Some(w), Some(o)) = (self.witness.as_mut(), part.witness.as_ref()) {
            w.input_assignment.extend_from_slice(o.input_assignment.get(1..).unwrap_or_default());
            w.input_positions.extend(o.input_positions.iter().skip(1).map(|&at| position(at)));
            w.aux_assignment.extend_from_slice(&o.aux_assignment[stand_ins..]);
        }
        self.input_positions.extend(part.input_positions.iter().skip(1).map(|&at| position(at)));
        self.num_inputs += part.num_inputs.saturating_sub(1);
        self.num_aux += part.num_aux - stand_ins;
        let last = self.num_inputs.max(self.num_aux);
        if last > AUX_TAG as usize {
            self.overflow.get_or_insert_with(|| format!("variable index {} needs more than 31 bits", last - 1));
        }
    }

    /// Appends a part recorded on its own that reads our variables
    /// (`part`'s imports), in the place a sequential recording would have
    /// recorded it.
    pub fn append_part(&mut self, part: Part<WITNESS>) {
        self.append(&part.cs, &part.imports, part.prologue_rows);
    }
}

/// A part of a recording that reads variables its parent allocated before
/// it, recorded apart (on a thread of its own) and appended with
/// [`Recorder::append_part`]: its first aux variables stand in for the
/// parent's (allocated again, with their values where the witness is
/// kept), and the rows that allocating them added (a bit's booleanity,
/// already in the parent) are dropped.
pub struct Part<const WITNESS: bool> {
    cs: Recorder<WITNESS>,
    imports: Vec<Variable>,
    prologue_rows: usize,
}

impl<const WITNESS: bool> Part<WITNESS> {
    /// A part reading `imports`, aux variables of the parent in the order
    /// they were allocated (bellpepper lists a row's terms by variable, so
    /// the part's rows then list them as a sequential recording does):
    /// `stand_ins` allocates one aux variable per import, in that order and
    /// nothing else, and returns the values as the part's synthesis reads
    /// them.
    ///
    /// # Panics
    /// If `imports` are not aux variables in increasing order, or
    /// `stand_ins` allocates another number of variables, an input, or a
    /// coefficient other than ±1 (which would join the parent's table where
    /// a sequential recording has none).
    pub fn new<T>(
        imports: Vec<Variable>,
        stand_ins: impl FnOnce(&mut Recorder<WITNESS>) -> Result<T, SynthesisError>,
    ) -> Result<(Self, T), SynthesisError> {
        let aux = |v: &Variable| match v.get_unchecked() {
            Index::Aux(i) => Some(i),
            Index::Input(_) => None,
        };
        assert!(
            imports.iter().all(|v| aux(v).is_some()) && imports.windows(2).all(|w| aux(&w[0]) < aux(&w[1])),
            "a part's imports: aux variables in allocation order"
        );
        let mut cs = Recorder::new();
        cs.alloc_input(|| "part's one", || Ok(Fr::ONE))?;
        let read_as = stand_ins(&mut cs)?;
        assert_eq!((cs.num_inputs, cs.num_aux), (1, imports.len()), "a part's stand-ins: one aux variable per import");
        assert_eq!(cs.coeffs.len(), 2, "a part's stand-ins use coefficients ±1 only");
        let prologue_rows = cs.a.row_ptr.len() - 1;
        Ok((Part { cs, imports, prologue_rows }, read_as))
    }

    /// The part's constraint system, for its synthesis.
    pub fn cs(&mut self) -> &mut Recorder<WITNESS> {
        &mut self.cs
    }
}

/// Hashes a coefficient's limbs with a multiply per word, not SipHash:
/// coefficients come from circuits, not from an adversary, and a
/// Poseidon-heavy circuit looks one up for nearly every term of its rounds.
#[derive(Default)]
struct LimbHasher(u64);

impl Hasher for LimbHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for word in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..word.len()].copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Records `circuit`'s R1CS as the prover sees it: the constant-one input
/// first, then the circuit, then one `input_i × 0 = 0` row per input (as
/// [`crate::cs::synthesize`] does). The circuit may be blank: allocation
/// closures are not called.
pub fn record<C: Circuit<Fr>>(circuit_id: &str, circuit: C) -> Result<Pce, PceError> {
    record_by(circuit_id, |cs| circuit.synthesize(cs))
}

/// Records `circuit`'s R1CS and keeps its witness (the closures run, as
/// in [`crate::cs::generate_witness`]): a circuit's first proof records
/// its PCE without a second synthesis.
pub fn record_with_witness<C: Circuit<Fr>>(circuit_id: &str, circuit: C) -> Result<(Pce, WitnessOnly), PceError> {
    record_with_witness_by(circuit_id, |cs| circuit.synthesize(cs))
}

/// Records what `synthesize` does to a recorder (a circuit's synthesis, or
/// one that records parts of it apart), as [`record`] does.
pub(crate) fn record_by(
    circuit_id: &str,
    synthesize: impl FnOnce(&mut Recorder<false>) -> Result<(), SynthesisError>,
) -> Result<Pce, PceError> {
    Ok(recorded(Recorder::new(), circuit_id, synthesize)?.0)
}

/// [`record_by`] keeping the witness, as [`record_with_witness`] does.
pub(crate) fn record_with_witness_by(
    circuit_id: &str,
    synthesize: impl FnOnce(&mut Recorder<true>) -> Result<(), SynthesisError>,
) -> Result<(Pce, WitnessOnly), PceError> {
    let (pce, witness) = recorded(Recorder::new(), circuit_id, synthesize)?;
    Ok((pce, witness.expect("recorded with a witness")))
}

/// The recording itself: the constant one, `synthesize`, the input rows.
pub(super) fn recorded<const WITNESS: bool>(
    mut cs: Recorder<WITNESS>,
    circuit_id: &str,
    synthesize: impl FnOnce(&mut Recorder<WITNESS>) -> Result<(), SynthesisError>,
) -> Result<(Pce, Option<WitnessOnly>), PceError> {
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    synthesize(&mut cs)?;
    for i in 0..cs.num_inputs {
        cs.enforce(|| "", |lc| lc + crate::cs::input_var(i), |lc| lc, |lc| lc);
    }
    let witness = cs.witness.take();
    Ok((cs.finish(circuit_id.to_string())?, witness))
}
