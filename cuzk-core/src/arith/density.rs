//! Density bitmaps: which variables appear (with a non-zero coefficient) in a
//! query. The A, B_G1 and B_G2 point vectors of the params hold points only
//! for the dense variables, so the MSMs walk the bitmap beside the points.

/// A growable bitmap with a cached count of set bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    pub fn new() -> Self {
        Self::default()
    }

    /// A bitmap of `len` bits, none set.
    pub fn zeros(len: usize) -> Self {
        Self { words: vec![0; len.div_ceil(64)], len, ones: 0 }
    }

    /// A bitmap of `len` bits, all set (a fully dense query).
    pub fn full(len: usize) -> Self {
        let mut d = Self { words: vec![u64::MAX; len.div_ceil(64)], len, ones: len };
        if !len.is_multiple_of(64) {
            *d.words.last_mut().unwrap() = (1u64 << (len % 64)) - 1;
        }
        d
    }

    /// The bitmap of `len` bits in `words` (bit i at position i % 64 of
    /// word i / 64; the bits past `len` unset).
    pub fn from_words(words: Vec<u64>, len: usize) -> Self {
        assert_eq!(words.len(), len.div_ceil(64), "{len} bits take {} words", len.div_ceil(64));
        assert!(len.is_multiple_of(64) || words.last().is_none_or(|w| w >> (len % 64) == 0), "bits set past {len}");
        let ones = words.iter().map(|w| w.count_ones() as usize).sum();
        Self { words, len, ones }
    }

    /// Appends one unset bit (a new variable).
    pub fn push(&mut self) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Marks variable `i` as present.
    #[inline]
    pub fn set(&mut self, i: usize) {
        debug_assert!(i < self.len);
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.words[w] & b == 0 {
            self.words[w] |= b;
            self.ones += 1;
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// The bitmap: bit i at position i % 64 of word i / 64 (what the
    /// device's density compaction reads).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits: the number of points the query holds.
    pub fn count(&self) -> usize {
        self.ones
    }

    /// Set bits strictly before index `i` (the point index of variable `i`).
    pub fn rank(&self, i: usize) -> usize {
        let full: usize = self.words[..i / 64].iter().map(|w| w.count_ones() as usize).sum();
        let part = if i.is_multiple_of(64) { 0 } else { (self.words[i / 64] & ((1u64 << (i % 64)) - 1)).count_ones() as usize };
        full + part
    }

    /// Appends the bits of `other` (used when partial assignments are joined).
    pub fn extend(&mut self, other: &Density) {
        for i in 0..other.len {
            self.push();
            if other.get(i) {
                let at = self.len - 1;
                self.set(at);
            }
        }
    }
}
