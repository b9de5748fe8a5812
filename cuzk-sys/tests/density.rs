//! Density compaction on the device against the obvious host filter: random
//! bitmaps from empty to full, sizes around word and block boundaries, bits
//! past n set (they must be ignored), and a destination that is too small;
//! and the scratch bound the memory plans use against CUB's exact need.

mod common;

use cuzk_sys::density::{compact_fr, compact_fr_room, compact_fr_scratch_bound, compact_fr_scratch_bytes};
use cuzk_sys::{DeviceBuffer, FrRepr, Stream};
use rand::Rng;

#[test]
fn compaction_equals_host_filter() {
    let Some(dev) = cuzk_sys::test_device("compaction_equals_host_filter") else { return };
    let stream = Stream::new(dev).unwrap();
    let mut rng = common::rng();
    let mut cases = 0;
    for n in [1usize, 2, 63, 64, 65, 255, 257, 1000, (1 << 16) + 17, (1 << 20) + 3, 3 << 20] {
        let src: Vec<FrRepr> = (0..n).map(|_| rng.gen()).collect();
        let mut d_src = DeviceBuffer::new(dev, n).unwrap();
        d_src.copy_from_host(&stream, 0, &src).unwrap();
        for p in [0.0, 0.03, 0.25, 0.5, 0.91, 1.0] {
            // Whole random words past n too: compaction must ignore them.
            let mut bits: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.gen()).collect();
            for i in 0..n {
                let b = 1u64 << (i % 64);
                if rng.gen_bool(p) {
                    bits[i / 64] |= b
                } else {
                    bits[i / 64] &= !b
                }
            }
            let want: Vec<FrRepr> = (0..n).filter(|&i| bits[i / 64] >> (i % 64) & 1 == 1).map(|i| src[i]).collect();
            // The scratch right after the scalars, junk in it: nothing may
            // depend on its contents.
            let ones = want.len();
            let room = compact_fr_room(n, ones);
            let mut d_dst = DeviceBuffer::new(dev, room).unwrap();
            let junk: Vec<FrRepr> = (0..room - ones).map(|_| rng.gen()).collect();
            d_dst.copy_from_host(&stream, ones, &junk).unwrap();
            let count = compact_fr(&stream, &d_src, n, &bits, ones, &mut d_dst).unwrap();
            assert_eq!(count, ones, "n {n}, density {p}");
            let mut got = vec![[0u64; 4]; count];
            d_dst.copy_to_host(&stream, 0, &mut got).unwrap();
            assert!(got == want, "n {n}, density {p}: compacted scalars differ");
            cases += 1;
        }
    }
    // A destination without room for the scalars and the scratch is an
    // error, not a write past its end; so are a short bitmap, and more
    // set bits than the caller counted (found on the device, before any
    // write).
    let n = 1000;
    let d_src = DeviceBuffer::<FrRepr>::new(dev, n).unwrap();
    let full = vec![u64::MAX; 16];
    let mut small = DeviceBuffer::new(dev, compact_fr_room(n, n) - 1).unwrap();
    let err = compact_fr(&stream, &d_src, n, &full, n, &mut small).unwrap_err();
    assert!(err.message.contains(&format!("room for {} needed", compact_fr_room(n, n))), "{err:?}");
    let err = compact_fr(&stream, &d_src, n, &[u64::MAX; 3], n - 100, &mut small).unwrap_err();
    assert!(err.message.contains("bitmap"), "{err:?}");
    let err = compact_fr(&stream, &d_src, n, &full, n + 1, &mut small).unwrap_err();
    assert!(err.message.contains("1001 set bits among 1000"), "{err:?}");
    let junk: Vec<FrRepr> = (0..small.len()).map(|_| rng.gen()).collect();
    small.copy_from_host(&stream, 0, &junk).unwrap();
    let err = compact_fr(&stream, &d_src, n, &full, n - 100, &mut small).unwrap_err();
    assert!(err.message.contains("1000 set bits but room for 900"), "{err:?}");
    let mut after = vec![[0u64; 4]; small.len()];
    small.copy_to_host(&stream, 0, &mut after).unwrap();
    assert!(after[..n - 100] == junk[..n - 100], "a miscounted compaction wrote scalars");
    println!(
        "density compaction equals the host filter in {cases} cases; short destinations and bitmaps, and \
         miscounted set bits, are errors"
    );
}

/// The plans count [`compact_fr_scratch_bound`] bytes of scratch (in
/// HTermBuffers' c): it must cover CUB's exact need at every size the
/// prover can meet, and not be far over it at the sizes where it is large.
#[test]
fn scratch_bound_covers_exact_need() {
    let Some(_dev) = cuzk_sys::test_device("scratch_bound_covers_exact_need") else { return };
    let mut rng = common::rng();
    let mut sizes: Vec<usize> = (0..=28).flat_map(|k| [(1usize << k) - 1, 1 << k, (1 << k) + 1]).collect();
    sizes.extend((0..200).map(|_| rng.gen_range(1..=1usize << 28)));
    sizes.retain(|&n| n > 0);
    let mut worst = 0f64;
    for &n in &sizes {
        let exact = compact_fr_scratch_bytes(n).unwrap() as usize;
        let bound = compact_fr_scratch_bound(n);
        assert!(exact <= bound, "n {n}: the compaction needs {exact} bytes of scratch, the bound is {bound}");
        if n >= 1 << 24 {
            worst = worst.max(bound as f64 / exact as f64);
        }
    }
    // 16 + 2 bytes a word against 16, plus the fixed 64 KiB: ~1.14x at 2^24.
    assert!(worst < 1.2, "the bound is {worst:.2}x the exact scratch at some n >= 2^24");
    println!("scratch bound >= CUB's exact need at {} sizes up to 2^28; at most {worst:.3}x it from 2^24 on", sizes.len());
}
