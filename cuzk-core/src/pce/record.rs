//! The recording constraint system: one synthesis gives the circuit's
//! R1CS as a [`Pce`]; from a blank circuit (allocation closures are not
//! called), or from an instance whose witness is kept in the same pass.

use crate::cs::WitnessOnly;
use super::{input_order_hash, Pce, PceError, Shape, SparseMatrix, COEFF_MINUS_ONE, COEFF_ONE};
use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use std::collections::HashMap;

/// While recording, an aux column is tagged with this bit (the input
/// count, which aux columns are offset by, is known only at the end).
const AUX_TAG: u32 = 1 << 31;

/// Records constraints as sparse rows; see [`record`].
pub struct Recorder {
    num_inputs: usize,
    num_aux: usize,
    input_positions: Vec<usize>,
    coeffs: Vec<Fr>,
    coeff_index: HashMap<[u8; 32], u32>,
    minus_one: Fr,
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    /// The first index that did not fit in 32 bits (enforce cannot fail,
    /// so it is reported when recording ends).
    overflow: Option<String>,
    /// The assignment, when recording an instance with its witness.
    witness: Option<WitnessOnly>,
}

impl Recorder {
    fn coeff(&mut self, c: &Fr) -> u32 {
        if *c == Fr::ONE {
            return COEFF_ONE;
        }
        if *c == self.minus_one {
            return COEFF_MINUS_ONE;
        }
        let key = c.to_repr();
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
        let shape = Shape {
            num_inputs: self.num_inputs,
            num_aux: self.num_aux,
            input_order: input_order_hash(&self.input_positions),
        };
        Pce::from_parts(circuit_id, shape, self.coeffs, self.a, self.b, self.c)
    }
}

impl ConstraintSystem<Fr> for Recorder {
    type Root = Self;

    fn new() -> Self {
        let empty = || SparseMatrix { row_ptr: vec![0], cols: Vec::new(), coeff_idx: Vec::new() };
        Recorder {
            num_inputs: 0,
            num_aux: 0,
            input_positions: Vec::new(),
            coeffs: vec![Fr::ONE, -Fr::ONE],
            coeff_index: HashMap::new(),
            minus_one: -Fr::ONE,
            a: empty(),
            b: empty(),
            c: empty(),
            overflow: None,
            witness: None,
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
}

/// Records `circuit`'s R1CS as the prover sees it: the constant-one input
/// first, then the circuit, then one `input_i × 0 = 0` row per input (as
/// [`crate::cs::synthesize`] does). The circuit may be blank: allocation
/// closures are not called.
pub fn record<C: Circuit<Fr>>(circuit_id: &str, circuit: C) -> Result<Pce, PceError> {
    record_into(Recorder::new(), circuit_id, circuit).map(|(pce, _)| pce)
}

/// Records `circuit`'s R1CS and keeps its witness (the closures run, as
/// in [`crate::cs::generate_witness`]): a circuit's first proof records
/// its PCE without a second synthesis.
pub fn record_with_witness<C: Circuit<Fr>>(circuit_id: &str, circuit: C) -> Result<(Pce, WitnessOnly), PceError> {
    let cs = Recorder { witness: Some(WitnessOnly::default()), ..Recorder::new() };
    let (pce, witness) = record_into(cs, circuit_id, circuit)?;
    Ok((pce, witness.expect("recorded with a witness")))
}

fn record_into<C: Circuit<Fr>>(mut cs: Recorder, circuit_id: &str, circuit: C) -> Result<(Pce, Option<WitnessOnly>), PceError> {
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.num_inputs {
        cs.enforce(|| "", |lc| lc + crate::cs::input_var(i), |lc| lc, |lc| lc);
    }
    let witness = cs.witness.take();
    Ok((cs.finish(circuit_id.to_string())?, witness))
}
