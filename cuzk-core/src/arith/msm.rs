//! Multi-scalar multiplication on the CPU with the 0/1 split.
//!
//! Filecoin witnesses are mostly 0 and 1. Points whose scalar is 0 are
//! skipped, points whose scalar is 1 are summed with blst's batch affine
//! addition (about one field multiplication per point plus a shared
//! inversion), and only the remaining "tail" goes through Pippenger.
//! Each thread takes one contiguous range of scalars, so the split and the
//! density walk are parallel too.

use super::{is_one, scalar_bytes, Density, MsmAffine};
use blstrs::Scalar as Fr;
use ff::Field;
use group::Group;

/// Below this many scalars per thread, threads cost more than they save.
const MIN_PER_THREAD: usize = 1 << 12;

/// Σ scalars[i]·points[i].
pub fn msm<A: MsmAffine>(points: &[A], scalars: &[Fr]) -> A::Proj {
    assert_eq!(points.len(), scalars.len(), "msm: one point per scalar");
    msm_with_density(points, None, scalars)
}

/// Σ over the variables `i` set in `density` of scalars[i]·points[rank(i)]:
/// `points` holds one point per set bit, in order (how the A and B queries
/// of the params are stored). `None` means every variable is present.
pub fn msm_with_density<A: MsmAffine>(points: &[A], density: Option<&Density>, scalars: &[Fr]) -> A::Proj {
    if let Some(d) = density {
        assert_eq!(d.len(), scalars.len(), "msm: density covers every scalar");
        assert_eq!(d.count(), points.len(), "msm: one point per dense variable");
    }
    let partials = crate::par::map_ranges(scalars.len(), MIN_PER_THREAD, |range| {
        let mut next_point = match density {
            Some(d) => d.rank(range.start),
            None => range.start,
        };
        let mut ones: Vec<*const A> = Vec::new();
        let mut tail_points: Vec<*const A> = Vec::new();
        let mut tail_scalars: Vec<[u8; 32]> = Vec::new();
        for i in range {
            if let Some(d) = density {
                if !d.get(i) {
                    continue;
                }
            }
            let p = &points[next_point] as *const A;
            next_point += 1;
            let s = &scalars[i];
            if bool::from(s.is_zero()) {
                continue;
            }
            if is_one(s) {
                ones.push(p);
            } else {
                tail_points.push(p);
                tail_scalars.push(scalar_bytes(s));
            }
        }
        A::sum(&ones) + A::pippenger(&tail_points, &tail_scalars)
    });
    partials.into_iter().fold(A::Proj::identity(), |acc, p| acc + p)
}

/// Σ points[i], in parallel (the batch-addition half of the 0/1 split, also
/// used on its own where every scalar is known to be one).
pub fn sum<A: MsmAffine>(points: &[A]) -> A::Proj {
    let partials = crate::par::map_chunks(points, MIN_PER_THREAD, |_, chunk| {
        let ptrs: Vec<*const A> = chunk.iter().map(|p| p as *const A).collect();
        A::sum(&ptrs)
    });
    partials.into_iter().fold(A::Proj::identity(), |acc, p| acc + p)
}
