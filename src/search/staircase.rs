//! A coarse copy of a front for rejecting points with one load: the time axis cut into buckets
//! of 1/256 of an octave (read off the bits of a positive `f64`), each holding the least energy
//! of the front's points no slower than the bucket's lower edge. A point whose energy is above
//! its bucket's value is strictly dominated by a real front point; any other point is left to
//! the exact check ([`Front::dominates_region`]). So the rejection is exact, and costs a few
//! instructions instead of a binary search.

use super::front::Front;

/// Bits of an `f64` below the bucket index: 52 mantissa bits less 8 (256 buckets per octave).
const SHIFT: u32 = 44;
/// Most buckets (the front's time span is cut more coarsely past this).
const MAX_BUCKETS: u64 = 1 << 16;

/// The staircase of a front.
#[derive(Debug, Clone, Default)]
pub struct Staircase {
    shift: u32,
    /// Bucket index of the first bucket (the fastest front point's).
    base: u64,
    /// Per bucket, the least front energy no slower than its lower edge (`+inf`: none).
    min_e: Vec<f64>,
}

impl Staircase {
    /// The staircase of `front` (empty for an empty front or one with a time that is not
    /// positive and finite).
    pub fn of(front: &Front) -> Staircase {
        let times: Vec<f64> = front.points().map(|p| p.time).collect();
        let (Some(&fast), Some(&slow)) = (times.first(), times.last()) else {
            return Staircase::default();
        };
        if !(fast > 0.0 && slow.is_finite()) {
            return Staircase::default();
        }
        let mut shift = SHIFT;
        while ((slow.to_bits() >> shift) - (fast.to_bits() >> shift)) >= MAX_BUCKETS {
            shift += 1;
        }
        let base = fast.to_bits() >> shift;
        let count = (slow.to_bits() >> shift) - base + 1;
        let min_e = (0..count)
            .map(|k| front.min_energy_within(f64::from_bits((base + k) << shift)))
            .collect();
        Staircase { shift, base, min_e }
    }

    /// Whether the front surely strictly dominates every point with `T >= t` and `E >= e`
    /// (`false`: perhaps, ask the front).
    #[inline(always)]
    pub fn dominates(&self, t: f64, e: f64) -> bool {
        let k = (t.to_bits() >> self.shift).wrapping_sub(self.base);
        // Below the first bucket (or a negative time): unknown; past the last: the last.
        if t < 0.0 || k > (1 << 62) {
            return false;
        }
        let k = (k as usize).min(self.min_e.len().wrapping_sub(1));
        self.min_e.get(k).is_some_and(|&m| m < e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_rejects_only_what_the_front_dominates() {
        let mut f = Front::new();
        for (t, e) in [(1.0, 10.0), (2.0, 5.0), (4.0, 2.0), (1000.0, 1.0)] {
            f.offer(t, e, (1, 1, 0, 0, 0));
        }
        let s = Staircase::of(&f);
        let mut checked = 0;
        for i in 0..2000 {
            let t = 0.3 + i as f64 * 0.7;
            for e in [0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 11.0] {
                if s.dominates(t, e) {
                    assert!(f.dominates_region(t, e), "{t} {e}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
        assert!(!s.dominates(0.5, 100.0));
        assert!(!Staircase::default().dominates(5.0, 100.0));
    }
}
