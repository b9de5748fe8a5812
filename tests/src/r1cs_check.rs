//! A circuit checked against a recorded R1CS as it synthesizes, without
//! recording it: [`PceCheck`] compares each constraint the circuit enforces
//! with the same row of a [`Pce`] (ours, as setup records it) and, with a
//! witness, each value it allocates with ours. Only the PCE and the witness
//! it is compared with are held, so a production-size circuit of another
//! crate (storage-proofs' 130M-constraint `StackedCircuit`) is compared
//! with ours in the memory of one recording instead of two.
//!
//! The comparison is that of two recordings ([`Pce`]'s equality): the same
//! rows in the same order, each with the same terms (variable and
//! coefficient; bellpepper keeps a linear combination's terms by variable,
//! merged, and zero coefficients are not recorded), the recorder's constant
//! one first and its `input × 0 = 0` rows last, the same input and aux
//! counts and the same positions of the inputs among the aux. Only the order
//! of the PCE's coefficient table, an encoding detail, is not compared.
//!
//! A circuit made of parts that share nothing but the constant one (a PoSt
//! partition's sectors) is checked part by part on threads
//! ([`check_parts`]): each part against the rows and variables where a
//! sequential synthesis puts it, found from the first part's size.

use bellpepper_core::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar as Fr;
use cuzk_core::cs::WitnessOnly;
use cuzk_core::pce::{input_order_hash, Pce, SparseMatrix};
use ff::{Field, PrimeField};

/// Where a check starts (or stands): the constraints, inputs and aux
/// variables before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub constraints: usize,
    pub inputs: usize,
    pub aux: usize,
}

/// The first difference of one kind and how many there were.
#[derive(Clone, Debug, Default)]
pub struct Differences {
    pub count: usize,
    /// The first (by constraint or variable index) and what differs there.
    pub first: Option<(usize, String)>,
}

impl Differences {
    fn note(&mut self, at: usize, what: impl FnOnce() -> String) {
        self.count += 1;
        if !matches!(&self.first, Some((first, _)) if *first <= at) {
            self.first = Some((at, what()));
        }
    }

    fn merge(&mut self, other: Differences) {
        self.count += other.count;
        if let Some((at, what)) = other.first {
            if !matches!(&self.first, Some((first, _)) if *first <= at) {
                self.first = Some((at, what));
            }
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The circuit's constraints, inputs and aux (the recorder's one and
    /// input rows included).
    pub counts: Counts,
    /// Constraints that differ from the PCE's row of the same index (or
    /// that the PCE does not have).
    pub r1cs: Differences,
    /// Values that differ from the witness's (with a witness only).
    pub values: Differences,
    /// The inputs' positions among the aux variables (as
    /// `WitnessOnly::input_positions` keeps them).
    pub input_positions: Vec<usize>,
}

impl Report {
    /// Everything that differs from the PCE (and the witness), or `None`.
    pub fn mismatch(&self, pce: &Pce, witness: Option<&WitnessOnly>) -> Option<String> {
        let mut why = Vec::new();
        let shape = &pce.shape;
        let theirs = Counts { constraints: pce.num_constraints(), inputs: shape.num_inputs, aux: shape.num_aux };
        if self.counts != theirs {
            why.push(format!("counts: circuit {:?}, PCE {theirs:?}", self.counts));
        }
        if input_order_hash(&self.input_positions) != shape.input_order {
            why.push("the inputs' positions among the aux differ from the PCE's".into());
        }
        if let Some(w) = witness {
            if w.input_positions != self.input_positions {
                why.push("the inputs' positions differ from the witness's".into());
            }
            let (inputs, aux) = (w.input_assignment.len(), w.aux_assignment.len());
            if (inputs, aux) != (self.counts.inputs, self.counts.aux) {
                why.push(format!("the witness has {inputs} inputs and {aux} aux, the circuit {:?}", self.counts));
            }
        }
        for (what, d) in [("constraints differ", &self.r1cs), ("values differ", &self.values)] {
            if let Some((_, first)) = &d.first {
                why.push(format!("{} {what}, the first: {first}", d.count));
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// A constraint system that compares what a circuit enforces and allocates
/// with a recorded R1CS (and a witness) instead of keeping it; see the
/// module.
pub struct PceCheck<'a> {
    pce: &'a Pce,
    /// With a witness the allocation closures run and their values are
    /// compared; without, they are not called (a blank circuit).
    witness: Option<&'a WitnessOnly>,
    at: Counts,
    report: Report,
}

impl<'a> PceCheck<'a> {
    /// A check of a part that starts at `at` (a whole circuit: [`check`]).
    pub fn at(pce: &'a Pce, witness: Option<&'a WitnessOnly>, at: Counts) -> Self {
        PceCheck { pce, witness, at, report: Report::default() }
    }

    /// What it found; `counts` is where it stands.
    pub fn into_report(mut self) -> Report {
        self.report.counts = self.at;
        self.report
    }

    /// `lc`'s terms as `(column, coefficient)`: a column below the PCE's
    /// input count is that input, else aux `column - inputs`; `None` for an
    /// input index the PCE does not have (it would read as an aux column).
    fn terms(&self, lc: &LinearCombination<Fr>) -> Vec<Option<(usize, Fr)>> {
        let inputs = self.pce.shape.num_inputs;
        let nonzero = |c: &&Fr| !bool::from(c.is_zero());
        let ins = lc.iter_inputs().filter(|(_, c)| nonzero(c)).map(|(&i, c)| (i < inputs).then_some((i, *c)));
        ins.chain(lc.iter_aux().filter(|(_, c)| nonzero(c)).map(|(&i, c)| Some((inputs + i, *c)))).collect()
    }

    fn row(&self, m: &SparseMatrix, row: usize) -> Option<Vec<(usize, Fr)>> {
        let (start, end) = (*m.row_ptr.get(row)? as usize, *m.row_ptr.get(row + 1)? as usize);
        let entries = m.cols[start..end].iter().zip(&m.coeff_idx[start..end]);
        Some(entries.map(|(&col, &k)| (col as usize, self.pce.coeffs[k as usize])).collect())
    }

    fn show(&self, terms: &[(usize, Fr)]) -> String {
        let inputs = self.pce.shape.num_inputs;
        let var = |col: usize| if col < inputs { format!("in{col}") } else { format!("aux{}", col - inputs) };
        let shown: Vec<String> = terms.iter().take(12).map(|(col, c)| format!("{}*{}", coeff(c), var(*col))).collect();
        let more = if terms.len() > 12 { format!(" + {} more", terms.len() - 12) } else { String::new() };
        format!("[{}{more}]", shown.join(" + "))
    }
}

/// A coefficient as a small signed number where it is one, else its bytes.
fn coeff(c: &Fr) -> String {
    for k in 0..=64u64 {
        if *c == Fr::from(k) {
            return k.to_string();
        }
        if *c == -Fr::from(k) {
            return format!("-{k}");
        }
    }
    let bytes = c.to_repr();
    let hex: String = bytes.as_ref().iter().rev().map(|b| format!("{b:02x}")).collect();
    format!("0x{hex}")
}

impl ConstraintSystem<Fr> for PceCheck<'_> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let j = self.at.aux;
        if let Some(w) = self.witness {
            let v = f()?;
            if w.aux_assignment.get(j) != Some(&v) {
                let ours = w.aux_assignment.get(j).map_or("none".into(), coeff);
                self.report.values.note(j, || format!("aux {j}: circuit {}, witness {ours}", coeff(&v)));
            }
        }
        self.at.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(j)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let i = self.at.inputs;
        if let Some(w) = self.witness {
            let v = f()?;
            if w.input_assignment.get(i) != Some(&v) {
                let ours = w.input_assignment.get(i).map_or("none".into(), coeff);
                self.report.values.note(self.at.aux, || format!("input {i}: circuit {}, witness {ours}", coeff(&v)));
            }
        }
        self.report.input_positions.push(self.at.aux);
        self.at.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(i)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        let r = self.at.constraints;
        self.at.constraints += 1;
        let lcs = [a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero())];
        let pce = self.pce;
        for ((name, m), lc) in [("A", &pce.a), ("B", &pce.b), ("C", &pce.c)].into_iter().zip(&lcs) {
            let terms = self.terms(lc);
            let row = self.row(m, r);
            let same = row.as_ref().is_some_and(|row| row.len() == terms.len() && row.iter().zip(&terms).all(|(x, y)| Some(*x) == *y));
            if !same {
                let circuit: Vec<(usize, Fr)> = terms.iter().map(|t| t.unwrap_or((usize::MAX, Fr::ZERO))).collect();
                let ours = row.map_or("no such row".into(), |row| self.show(&row));
                let circuit = self.show(&circuit);
                self.report.r1cs.note(r, || format!("constraint {r}, {name}: circuit {circuit}, PCE {ours}"));
                return;
            }
        }
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

/// Checks `circuit` against `pce` (and `witness`, whose values the circuit
/// then computes): synthesized as the recorder records it, the constant one
/// first and one `input × 0 = 0` row per input last.
pub fn check<C: Circuit<Fr>>(pce: &Pce, witness: Option<&WitnessOnly>, circuit: C) -> Result<Report, SynthesisError> {
    check_with(pce, witness, |cs| circuit.synthesize(cs))
}

/// [`check`] of what `synthesize` does to the checker.
pub fn check_with(
    pce: &Pce,
    witness: Option<&WitnessOnly>,
    synthesize: impl FnOnce(&mut PceCheck<'_>) -> Result<(), SynthesisError>,
) -> Result<Report, SynthesisError> {
    let mut cs = PceCheck::at(pce, witness, Counts::default());
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    synthesize(&mut cs)?;
    for i in 0..cs.at.inputs {
        cs.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    Ok(cs.into_report())
}

/// [`check`] of a circuit that synthesizes `parts` one after another and
/// nothing else, whose parts share no variable but the constant one and
/// are all of one size (a PoSt partition: its sectors): part 0 checked
/// first, which gives the size, then each part where a sequential synthesis
/// puts it, on `threads` threads. A part of another size is reported as a
/// difference (the parts after it would be compared at the wrong rows).
pub fn check_parts<P: Sync>(
    pce: &Pce,
    witness: Option<&WitnessOnly>,
    parts: &[P],
    threads: usize,
    synthesize: impl Fn(&P, &mut PceCheck<'_>) -> Result<(), SynthesisError> + Sync,
) -> Result<Report, SynthesisError> {
    let Some((first, rest)) = parts.split_first() else { return check_with(pce, witness, |_| Ok(())) };
    let check_part = |at: Counts, p: &P| -> Result<Report, SynthesisError> {
        let mut cs = PceCheck::at(pce, witness, at);
        synthesize(p, &mut cs)?;
        Ok(cs.into_report())
    };
    let start = Counts { constraints: 0, inputs: 1, aux: 0 };
    let report0 = check_part(start, first)?;
    let size = Counts { constraints: report0.counts.constraints, inputs: report0.counts.inputs - 1, aux: report0.counts.aux };
    let at = |k: usize| Counts { constraints: k * size.constraints, inputs: 1 + k * size.inputs, aux: k * size.aux };
    let chunk = rest.len().div_ceil(threads.max(1)).max(1);
    let reports: Vec<Result<Vec<Report>, SynthesisError>> = std::thread::scope(|s| {
        let handles: Vec<_> = rest
            .chunks(chunk)
            .enumerate()
            .map(|(c, parts)| {
                let check_part = &check_part;
                s.spawn(move || parts.iter().enumerate().map(|(i, p)| check_part(at(1 + c * chunk + i), p)).collect::<Result<Vec<_>, _>>())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a part's check panicked")).collect()
    });
    // The whole circuit's report: the parts' in order, then the recorder's
    // one and input rows as `check_with` adds them.
    let mut whole = PceCheck::at(pce, witness, Counts::default());
    whole.alloc_input(|| "one", || Ok(Fr::ONE))?;
    let mut parts_reports = vec![report0];
    for r in reports {
        parts_reports.extend(r?);
    }
    for (k, r) in parts_reports.into_iter().enumerate() {
        if r.counts != at(k + 1) {
            let begin = at(k);
            let got = Counts {
                constraints: r.counts.constraints - begin.constraints,
                inputs: r.counts.inputs - begin.inputs,
                aux: r.counts.aux - begin.aux,
            };
            whole.report.r1cs.note(begin.constraints, || format!("part {k} has {got:?}, part 0 {size:?}: the parts differ in size"));
        }
        whole.report.r1cs.merge(r.r1cs);
        whole.report.values.merge(r.values);
        whole.report.input_positions.extend(r.input_positions);
    }
    whole.at = at(parts.len());
    for i in 0..whole.at.inputs {
        whole.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    Ok(whole.into_report())
}
