//! The exact two-objective Pareto front of `(T, E)`, built incrementally.
//!
//! Points are kept sorted by time, slowest first, so energy is strictly ascending; the point
//! with the least energy among those no slower than `t` is found by one binary search. The
//! search offers each group's node counts from few to many, slow to fast, so most new points
//! land at or near the end (kept fastest first, every such point shifted the whole front: a
//! third of the time of a 12,900-point front went to moving memory). A point equal in both
//! objectives to a front point is a tie: the front keeps one deterministic representative (the
//! smallest [`Key`]) and counts the others.

/// A configuration's identity in the search: `(nodes, cores, frequency index, gpus, GPU clock
/// index)`, ordered so that the representative of a tie is the one with fewest nodes, then
/// cores, then the lowest frequency, then fewest GPUs, then the highest GPU clock (its index
/// counts down from the top clock, `Space::clocks_for`).
pub type Key = (u32, u32, usize, u32, u32);

/// A point of the front.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrontPoint {
    /// Time `T` in seconds.
    pub time: f64,
    /// Energy `E` in joules.
    pub energy: f64,
    /// The representative configuration.
    pub key: Key,
    /// How many configurations share exactly this `(T, E)`, the representative included.
    pub ties: u64,
}

/// An incrementally built Pareto front.
#[derive(Debug, Clone, Default)]
pub struct Front {
    /// Slowest first.
    points: Vec<FrontPoint>,
}

impl Front {
    /// An empty front.
    pub fn new() -> Self {
        Self::default()
    }

    /// The points, fastest first.
    pub fn points(&self) -> impl ExactSizeIterator<Item = &FrontPoint> {
        self.points.iter().rev()
    }

    /// Consumes the front into its points, fastest first.
    pub fn into_points(mut self) -> Vec<FrontPoint> {
        self.points.reverse();
        self.points
    }

    /// The index of the slowest point no slower than `t` (`len` when none).
    #[inline]
    fn first_within(&self, t: f64) -> usize {
        self.points.partition_point(|p| p.time > t)
    }

    /// The least energy among front points no slower than `t` (`+inf` when none).
    #[inline]
    pub fn min_energy_within(&self, t: f64) -> f64 {
        self.points
            .get(self.first_within(t))
            .map_or(f64::INFINITY, |p| p.energy)
    }

    /// Whether some front point strictly dominates every point with `T >= t` and `E >= e`.
    #[inline]
    pub fn dominates_region(&self, t: f64, e: f64) -> bool {
        self.min_energy_within(t) < e
    }

    /// Offers one configuration.
    #[inline]
    pub fn offer(&mut self, time: f64, energy: f64, key: Key) {
        self.offer_counted(time, energy, key, 1);
    }

    /// Offers a point that stands for `ties` configurations.
    pub fn offer_counted(&mut self, time: f64, energy: f64, key: Key, ties: u64) {
        let i = self.first_within(time);
        let mut end = i;
        if let Some(q) = self.points.get_mut(i) {
            if q.time == time && q.energy == energy {
                q.ties += ties;
                if key < q.key {
                    q.key = key;
                }
                return;
            }
            if q.energy <= energy {
                return; // dominated: no slower-or-equal point uses more or equal energy
            }
            if q.time == time {
                end = i + 1; // as fast, more energy: dominated by the new point
            }
        }
        // The slower points it dominates (E >= energy) form a run ending just before `i`.
        let mut start = i;
        while start > 0 && self.points[start - 1].energy >= energy {
            start -= 1;
        }
        let new = FrontPoint {
            time,
            energy,
            key,
            ties,
        };
        if end - start == 1 {
            self.points[start] = new;
        } else {
            self.points.splice(start..end, std::iter::once(new));
        }
    }

    /// Merges another front into this one (ties add up), in one pass over both.
    pub fn merge(self, other: Front) -> Front {
        if other.points.is_empty() {
            return self;
        }
        if self.points.is_empty() {
            return other;
        }
        // Fastest first, by (time, energy): a point is kept when it uses less energy than
        // every faster point kept so far; an exact repeat of the last one is a tie.
        let (mut a, mut b) = (
            self.points.into_iter().rev(),
            other.points.into_iter().rev(),
        );
        let (mut x, mut y) = (a.next(), b.next());
        let mut out: Vec<FrontPoint> = Vec::new();
        loop {
            let p = match (x, y) {
                (Some(p), Some(q)) if (p.time, p.energy) <= (q.time, q.energy) => {
                    x = a.next();
                    p
                }
                (_, Some(q)) => {
                    y = b.next();
                    q
                }
                (Some(p), None) => {
                    x = a.next();
                    p
                }
                (None, None) => break,
            };
            match out.last_mut() {
                Some(l) if l.time == p.time && l.energy == p.energy => {
                    l.ties += p.ties;
                    l.key = l.key.min(p.key);
                }
                Some(l) if l.energy <= p.energy => {}
                _ => out.push(p),
            }
        }
        out.reverse();
        Front { points: out }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_non_dominated_points_sorted_by_time() {
        let mut f = Front::new();
        f.offer(3.0, 1.0, (1, 1, 0, 0, 0));
        f.offer(1.0, 3.0, (2, 1, 0, 0, 0));
        f.offer(2.0, 2.0, (3, 1, 0, 0, 0));
        f.offer(2.5, 2.5, (4, 1, 0, 0, 0)); // dominated by (2, 2)
        f.offer(1.5, 1.5, (5, 1, 0, 0, 0)); // dominates (2, 2) only
        let t: Vec<f64> = f.points().map(|p| p.time).collect();
        assert_eq!(t, vec![1.0, 1.5, 3.0]);
        f.offer(1.5, 0.5, (6, 1, 0, 0, 0)); // same time, less energy: replaces, and beats (3, 1)
        let t: Vec<(f64, f64)> = f.points().map(|p| (p.time, p.energy)).collect();
        assert_eq!(t, vec![(1.0, 3.0), (1.5, 0.5)]);
    }

    #[test]
    fn ties_keep_the_smallest_key_and_count() {
        let mut f = Front::new();
        f.offer(1.0, 1.0, (4, 2, 0, 0, 0));
        f.offer(1.0, 1.0, (2, 8, 0, 0, 0));
        f.offer(1.0, 1.0, (3, 1, 0, 0, 0));
        assert_eq!(f.points().len(), 1);
        let p: Vec<&FrontPoint> = f.points().collect();
        assert_eq!(p[0].key, (2, 8, 0, 0, 0));
        assert_eq!(p[0].ties, 3);
    }

    #[test]
    fn equal_energy_but_slower_is_dominated() {
        let mut f = Front::new();
        f.offer(1.0, 1.0, (1, 1, 0, 0, 0));
        f.offer(2.0, 1.0, (2, 1, 0, 0, 0));
        f.offer(0.5, 1.0, (3, 1, 0, 0, 0));
        let pts: Vec<(f64, f64)> = f.points().map(|p| (p.time, p.energy)).collect();
        assert_eq!(pts, vec![(0.5, 1.0)]);
    }

    #[test]
    fn merging_is_offering_every_point() {
        let pts = [
            (3.0, 1.0),
            (1.0, 3.0),
            (2.0, 2.0),
            (2.0, 2.0),
            (1.5, 2.5),
            (2.5, 1.0),
            (1.0, 3.0),
            (0.5, 4.0),
            (2.0, 1.5),
        ];
        for split in 0..=pts.len() {
            let (mut a, mut b, mut all) = (Front::new(), Front::new(), Front::new());
            for (k, &(t, e)) in pts.iter().enumerate() {
                let key = (k as u32, 1, 0, 0, 0);
                all.offer(t, e, key);
                if k < split {
                    a.offer(t, e, key);
                } else {
                    b.offer(t, e, key);
                }
            }
            assert_eq!(a.merge(b).into_points(), all.into_points(), "split {split}");
        }
    }

    #[test]
    fn equal_time_more_energy_is_dominated() {
        let mut f = Front::new();
        f.offer(1.0, 1.0, (1, 1, 0, 0, 0));
        f.offer(1.0, 2.0, (2, 1, 0, 0, 0));
        f.offer(2.0, 1.0, (3, 1, 0, 0, 0));
        let p: Vec<&FrontPoint> = f.points().collect();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].ties, 1);
    }
}
