//! SHA-256 witness generation: the values of every variable that
//! bellpepper's (and bellperson 0.27's identical) `sha256` gadget
//! allocates, in its order, without the linear combinations the gadget
//! builds for its constraints even when the constraint system ignores them.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;

use super::aux_sink::AuxSink;
use super::word::{addmany, Sum, Word};

#[rustfmt::skip]
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// SHA-256 of `input` (bits, most significant first in each byte), the
/// same result and the same variables as `bellperson::gadgets::sha256::sha256`.
///
/// Into a witness generator (`cs.is_witness_generator()`, e.g.
/// [`crate::cs::WitnessOnly`]) with every input value known, it computes the
/// values directly and hands them over in bulk; only the digest's bits are
/// allocated one by one, as the `AllocatedBit`s it returns. Otherwise
/// (recording the constraints, proving assignments, test systems, or an
/// input without a value) it runs bellpepper 0.2's gadget, whose code
/// bellperson 0.27 re-exports unchanged.
pub fn sha256<CS: ConstraintSystem<Fr>>(mut cs: CS, input: &[Boolean]) -> Result<Vec<Boolean>, SynthesisError> {
    if !cs.is_witness_generator() || input.iter().any(|b| b.get_value().is_none()) {
        return bellpepper::gadgets::sha256::sha256(cs, input);
    }
    let mut sink = AuxSink::new();
    let digest = digest_words(&mut cs, &mut sink, input, DigestBits::Allocated)?;
    sink.flush(&mut cs);
    Ok(digest.into_iter().flat_map(DigestWord::into_bits_be).collect())
}

/// How the digest's own variables are produced.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DigestBits {
    /// Through `AllocatedBit::alloc`, to be handed back to the caller.
    Allocated,
    /// As values with the rest, for callers that only need the digest's value.
    ValuesOnly,
}

/// One word of the digest: its value and, when the caller asked for them
/// and it is not a constant, its 32 variables (least significant first).
pub(crate) struct DigestWord {
    pub word: Word,
    bits: Option<Vec<AllocatedBit>>,
}

impl DigestWord {
    /// The gadget's `UInt32::into_bits_be`.
    fn into_bits_be(self) -> impl Iterator<Item = Boolean> {
        let value = self.word.value;
        let bits: Vec<Boolean> = match self.bits {
            Some(bits) => bits.into_iter().rev().map(Boolean::Is).collect(),
            None => {
                debug_assert!(self.word.is_constant());
                (0..32).rev().map(|i| Boolean::Constant((value >> i) & 1 == 1)).collect()
            }
        };
        bits.into_iter()
    }
}

/// The padded message's 32-bit words as the gadget's `UInt32::from_bits_be`
/// sees them; `None` when a bit has no value.
fn padded_words(input: &[Boolean]) -> Option<Vec<Word>> {
    assert!(input.len().is_multiple_of(8), "SHA-256 input must be whole bytes");
    let len_bits = input.len() as u64;
    // Message, a one, zeros up to 448 mod 512, the length: all constants
    // but the message.
    let total = (input.len() + 1 + 64).div_ceil(512) * 512;
    let mut words = Vec::with_capacity(total / 32);
    let bit_at = |k: usize| -> Option<(bool, bool, bool)> {
        // (value, constant, not)
        if k < input.len() {
            return Some(match &input[k] {
                Boolean::Constant(v) => (*v, true, false),
                Boolean::Is(b) => (b.get_value()?, false, false),
                Boolean::Not(b) => (!b.get_value()?, false, true),
            });
        }
        let v = if k == input.len() {
            true
        } else if k >= total - 64 {
            (len_bits >> (total - 1 - k)) & 1 == 1
        } else {
            false
        };
        Some((v, true, false))
    };
    for w in 0..total / 32 {
        let mut word = Word { value: 0, konst: 0, not: 0 };
        for j in 0..32 {
            let (v, c, n) = bit_at(w * 32 + j)?;
            let i = 31 - j;
            word.value |= (v as u32) << i;
            word.konst |= (c as u32) << i;
            word.not |= (n as u32) << i;
        }
        words.push(word);
    }
    Some(words)
}

/// The whole hash: every block's compression, the last one's outputs as
/// `digest` asks.
pub(crate) fn digest_words<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    sink: &mut AuxSink,
    input: &[Boolean],
    digest: DigestBits,
) -> Result<Vec<DigestWord>, SynthesisError> {
    let words = padded_words(input).ok_or(SynthesisError::AssignmentMissing)?;
    let mut cur = IV.map(Word::constant);
    let blocks = words.len() / 16;
    for (i, block) in words.chunks(16).enumerate() {
        let last = i + 1 == blocks;
        let outputs = compress(cs, sink, block, &cur, if last { digest } else { DigestBits::ValuesOnly })?;
        if last {
            return Ok(outputs);
        }
        for (c, o) in cur.iter_mut().zip(outputs) {
            *c = o.word;
        }
    }
    unreachable!("a padded message has at least one block")
}

/// The gadget's deferred additions: `a` and `e` are kept as the list of
/// their addends until a round or the final addition needs them.
enum Pending {
    Ready(Word),
    Sum { operands: [Word; 8], len: usize },
}

impl Pending {
    fn sum(parts: &[&[Word]]) -> Pending {
        let mut operands = [Word::constant(0); 8];
        let mut len = 0;
        for w in parts.iter().flat_map(|p| p.iter()) {
            operands[len] = *w;
            len += 1;
        }
        Pending::Sum { operands, len }
    }

    fn compute(self, sink: &mut AuxSink) -> Word {
        match self {
            Pending::Ready(w) => w,
            Pending::Sum { operands, len } => addmany(sink, &operands[..len]),
        }
    }

    /// The final `h += x`: after 64 rounds `a` and `e` are always
    /// deferred sums, which take `extra` as one more addend.
    fn with(self, extra: Word) -> Vec<Word> {
        match self {
            Pending::Ready(_) => unreachable!("a and e are deferred sums after the first round"),
            Pending::Sum { operands, len } => {
                let mut v = operands[..len].to_vec();
                v.push(extra);
                v
            }
        }
    }
}

/// `sha256_compression_function` on one 16-word block.
fn compress<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    sink: &mut AuxSink,
    block: &[Word],
    cur: &[Word; 8],
    digest: DigestBits,
) -> Result<Vec<DigestWord>, SynthesisError> {
    let mut w = [Word::constant(0); 64];
    w[..16].copy_from_slice(block);
    for i in 16..64 {
        let s0 = w[i - 15].rotr(7).xor(sink, &w[i - 15].rotr(18)).xor(sink, &w[i - 15].shr(3));
        let s1 = w[i - 2].rotr(17).xor(sink, &w[i - 2].rotr(19)).xor(sink, &w[i - 2].shr(10));
        w[i] = addmany(sink, &[w[i - 16], s0, w[i - 7], s1]);
        sink.flush_if_full(cs);
    }

    let mut a = Pending::Ready(cur[0]);
    let (mut b, mut c, mut d) = (cur[1], cur[2], cur[3]);
    let mut e = Pending::Ready(cur[4]);
    let (mut f, mut g, mut h) = (cur[5], cur[6], cur[7]);
    for i in 0..64 {
        let new_e = e.compute(sink);
        let s1 = new_e.rotr(6).xor(sink, &new_e.rotr(11)).xor(sink, &new_e.rotr(25));
        let ch = Word::ch(sink, &new_e, &f, &g);
        let temp1 = [h, s1, ch, Word::constant(ROUND_CONSTANTS[i]), w[i]];

        let new_a = a.compute(sink);
        let s0 = new_a.rotr(2).xor(sink, &new_a.rotr(13)).xor(sink, &new_a.rotr(22));
        let maj = Word::maj(sink, &new_a, &b, &c);

        h = g;
        g = f;
        f = new_e;
        e = Pending::sum(&[&temp1, &[d]]);
        d = c;
        c = b;
        b = new_a;
        a = Pending::sum(&[&temp1, &[s0, maj]]);
        sink.flush_if_full(cs);
    }

    let finals: [Vec<Word>; 8] = [
        a.with(cur[0]),
        vec![cur[1], b],
        vec![cur[2], c],
        vec![cur[3], d],
        e.with(cur[4]),
        vec![cur[5], f],
        vec![cur[6], g],
        vec![cur[7], h],
    ];
    let mut out = Vec::with_capacity(8);
    for (k, operands) in finals.into_iter().enumerate() {
        let sum = Sum::of(&operands);
        if digest == DigestBits::ValuesOnly || sum.bits == 0 {
            out.push(DigestWord { word: sum.push(sink), bits: None });
            continue;
        }
        // The result bits the caller gets are real `AllocatedBit`s at their
        // place in the order; the carries after them are values like the rest.
        sink.flush(cs);
        let mut bits = Vec::with_capacity(32);
        for i in 0..32 {
            let bit = (sum.total >> i) & 1 == 1;
            bits.push(AllocatedBit::alloc(cs.namespace(|| format!("digest word {k} bit {i}")), Some(bit))?);
        }
        for i in 32..sum.bits {
            sink.bit((sum.total >> i) & 1 == 1);
        }
        out.push(DigestWord { word: Word::allocated(sum.total as u32), bits: Some(bits) });
    }
    Ok(out)
}
