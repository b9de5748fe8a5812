//! The value of a bellpepper `UInt32` with, per bit, what the gadget's
//! `Boolean` would be (`Constant`, `Is` or `Not`), and the word operations
//! of the SHA-256 gadget computing only the values of the variables they
//! allocate, in the gadget's order.
//!
//! The `Boolean` rules decide what allocates: an operation on a constant
//! folds (no variable), `Not` flips which value the variable holds. Words
//! with no constant bit take word-wide fast paths; the rest go bit by bit
//! through [`Bit`] following bellpepper-core 0.2's `Boolean::{xor, and,
//! sha256_ch, sha256_maj}` case for case.

use super::aux_sink::AuxSink;

/// 32 bits, least significant first as in `UInt32`. Bit `i` is
/// `Boolean::Constant` where `konst` has it set, otherwise a variable,
/// wrapped in `Boolean::Not` where `not` has it set. `value` is always the
/// bit's logical value, so a variable holds `value ^ not`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    pub value: u32,
    pub konst: u32,
    pub not: u32,
}

/// One bit in the same terms: its logical value and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bit {
    Const(bool),
    /// A variable; `not` when the gadget holds it as `Boolean::Not`.
    Var {
        value: bool,
        not: bool,
    },
}

impl Bit {
    fn value(self) -> bool {
        match self {
            Bit::Const(v) | Bit::Var { value: v, .. } => v,
        }
    }

    fn not(self) -> Bit {
        match self {
            Bit::Const(v) => Bit::Const(!v),
            Bit::Var { value, not } => Bit::Var { value: !value, not: !not },
        }
    }

    /// A new variable holding `value`, used as `Boolean::Is`.
    fn alloc(sink: &mut AuxSink, value: bool) -> Bit {
        sink.bit(value);
        Bit::Var { value, not: false }
    }

    /// `Boolean::and`: a constant operand folds; two variables allocate
    /// one (`and`, `and_not` or `nor`, all holding the logical result).
    fn and(sink: &mut AuxSink, x: Bit, y: Bit) -> Bit {
        match (x, y) {
            (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
            (Bit::Const(true), o) | (o, Bit::Const(true)) => o,
            _ => Bit::alloc(sink, x.value() & y.value()),
        }
    }

    /// `Boolean::sha256_ch(a, b, c)`: `(a and b) xor ((not a) and c)`.
    fn ch(sink: &mut AuxSink, a: Bit, b: Bit, c: Bit) -> Bit {
        use Bit::Const;
        match (a, b, c) {
            (Const(a), Const(b), Const(c)) => Const((a & b) ^ (!a & c)),
            (Const(false), _, c) => c,
            (a, Const(false), c) => Bit::and(sink, a.not(), c),
            (a, b, Const(false)) => Bit::and(sink, a, b),
            (a, b, Const(true)) => Bit::and(sink, a, b.not()).not(),
            (a, Const(true), c) => Bit::and(sink, a.not(), c.not()).not(),
            // `a` constant true with variables `b`, `c`, or all variables.
            _ => {
                let (a, b, c) = (a.value(), b.value(), c.value());
                Bit::alloc(sink, (a & b) ^ (!a & c))
            }
        }
    }

    /// `Boolean::sha256_maj(a, b, c)`: `(a and b) xor (a and c) xor (b and c)`.
    fn maj(sink: &mut AuxSink, a: Bit, b: Bit, c: Bit) -> Bit {
        use Bit::Const;
        match (a, b, c) {
            (Const(a), Const(b), Const(c)) => Const((a & b) ^ (a & c) ^ (b & c)),
            (Const(false), b, c) => Bit::and(sink, b, c),
            (a, Const(false), c) => Bit::and(sink, a, c),
            (a, b, Const(false)) => Bit::and(sink, a, b),
            (a, b, Const(true)) => Bit::and(sink, a.not(), b.not()).not(),
            (a, Const(true), c) => Bit::and(sink, a.not(), c.not()).not(),
            (Const(true), b, c) => Bit::and(sink, b.not(), c.not()).not(),
            // All variables: the result, then `b and c` for its constraint.
            _ => {
                let (a, b, c) = (a.value(), b.value(), c.value());
                let maj = Bit::alloc(sink, (a & b) ^ (a & c) ^ (b & c));
                Bit::alloc(sink, b & c);
                maj
            }
        }
    }
}

impl Word {
    pub(crate) const fn constant(value: u32) -> Word {
        Word { value, konst: u32::MAX, not: 0 }
    }

    /// A word of variables used as `Boolean::Is`.
    pub(crate) const fn allocated(value: u32) -> Word {
        Word { value, konst: 0, not: 0 }
    }

    pub(crate) fn is_constant(&self) -> bool {
        self.konst == u32::MAX
    }

    pub(crate) fn bit(&self, i: u32) -> Bit {
        let value = (self.value >> i) & 1 == 1;
        if (self.konst >> i) & 1 == 1 {
            Bit::Const(value)
        } else {
            Bit::Var { value, not: (self.not >> i) & 1 == 1 }
        }
    }

    fn from_bit_fn(mut f: impl FnMut(u32) -> Bit) -> Word {
        let mut w = Word { value: 0, konst: 0, not: 0 };
        for i in 0..32 {
            match f(i) {
                Bit::Const(v) => {
                    w.value |= (v as u32) << i;
                    w.konst |= 1 << i;
                }
                Bit::Var { value, not } => {
                    w.value |= (value as u32) << i;
                    w.not |= (not as u32) << i;
                }
            }
        }
        w
    }

    /// `UInt32::rotr`.
    pub(crate) fn rotr(&self, by: u32) -> Word {
        Word { value: self.value.rotate_right(by), konst: self.konst.rotate_right(by), not: self.not.rotate_right(by) }
    }

    /// `UInt32::shr`: the bits shifted in are constant false.
    pub(crate) fn shr(&self, by: u32) -> Word {
        debug_assert!(by > 0 && by < 32);
        Word { value: self.value >> by, konst: (self.konst >> by) | !(u32::MAX >> by), not: self.not >> by }
    }

    /// `UInt32::xor`: per bit, a constant operand folds (false: the other
    /// bit, true: its negation); two variables allocate one holding the xor
    /// of what they hold, wrapped in `Not` when exactly one was a `Not`.
    pub(crate) fn xor(&self, sink: &mut AuxSink, other: &Word) -> Word {
        let konst = self.konst & other.konst;
        let value = self.value ^ other.value;
        let not = (self.not ^ other.not ^ (self.value & self.konst) ^ (other.value & other.konst)) & !konst;
        sink.masked_bits(!self.konst & !other.konst, value ^ not);
        Word { value, konst, not }
    }

    /// `UInt32::sha256_ch(self, f, g)`.
    pub(crate) fn ch(sink: &mut AuxSink, e: &Word, f: &Word, g: &Word) -> Word {
        if e.konst | f.konst | g.konst == 0 {
            let value = (e.value & f.value) ^ (!e.value & g.value);
            sink.masked_bits(u32::MAX, value);
            return Word::allocated(value);
        }
        Word::from_bit_fn(|i| Bit::ch(sink, e.bit(i), f.bit(i), g.bit(i)))
    }

    /// `UInt32::sha256_maj(a, b, c)`.
    pub(crate) fn maj(sink: &mut AuxSink, a: &Word, b: &Word, c: &Word) -> Word {
        if a.konst | b.konst | c.konst == 0 {
            let value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
            let bc = b.value & c.value;
            for i in 0..32 {
                sink.bit((value >> i) & 1 == 1);
                sink.bit((bc >> i) & 1 == 1);
            }
            return Word::allocated(value);
        }
        Word::from_bit_fn(|i| Bit::maj(sink, a.bit(i), b.bit(i), c.bit(i)))
    }
}

/// What `UInt32::addmany(operands)` allocates: nothing when every operand
/// bit is constant (the result is a constant), otherwise the sum's bits up
/// to the width of `operands.len() * u32::MAX`, lowest first, of which the
/// low 32 make the result.
pub(crate) struct Sum {
    /// The full sum (carries included).
    pub total: u64,
    /// Result bits the gadget allocates; 0 when the sum folds to a constant.
    pub bits: u32,
}

impl Sum {
    pub(crate) fn of(operands: &[Word]) -> Sum {
        assert!((2..=10).contains(&operands.len()), "addmany takes 2 to 10 operands");
        let total = operands.iter().map(|w| u64::from(w.value)).sum();
        let bits =
            if operands.iter().all(Word::is_constant) { 0 } else { 64 - (operands.len() as u64 * u64::from(u32::MAX)).leading_zeros() };
        Sum { total, bits }
    }

    /// The result word, its bits pushed to `sink`.
    pub(crate) fn push(self, sink: &mut AuxSink) -> Word {
        if self.bits == 0 {
            return Word::constant(self.total as u32);
        }
        for i in 0..self.bits {
            sink.bit((self.total >> i) & 1 == 1);
        }
        Word::allocated(self.total as u32)
    }
}

/// `UInt32::addmany(operands)`, values only.
pub(crate) fn addmany(sink: &mut AuxSink, operands: &[Word]) -> Word {
    Sum::of(operands).push(sink)
}
