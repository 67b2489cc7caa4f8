//! Labels that never overlap: each label is tried at a few places around its point, in pixel
//! space, and kept at the first where it touches no marker, no earlier label and stays inside
//! the plot; a label with no free place is dropped (the table lists every point anyway).

/// A rectangle in backend pixels: `(x0, y0, x1, y1)`.
pub type Rect = (i32, i32, i32, i32);

/// The room a label of measured size `(w, h)` is given: a viewer's own sans-serif may run
/// wider than the embedded font it was measured with.
pub fn room((w, h): (u32, u32)) -> (i32, i32) {
    ((f64::from(w) * 1.2).ceil() as i32 + 4, h as i32 + 4)
}

/// Places labels greedily.
#[derive(Debug, Clone)]
pub struct Placer {
    area: Rect,
    taken: Vec<Rect>,
}

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

impl Placer {
    /// A placer for labels inside `area`.
    pub fn new(area: Rect) -> Placer {
        Placer {
            area,
            taken: Vec::new(),
        }
    }

    /// Marks a region (a point's marker) that no label may cover.
    pub fn block(&mut self, r: Rect) {
        self.taken.push(r);
    }

    /// Marks a square of half-width `r` around a point.
    pub fn block_point(&mut self, (x, y): (i32, i32), r: i32) {
        self.block((x - r, y - r, x + r, y + r));
    }

    /// The top-left corner for a `w` x `h` label of the point at `(x, y)`, or `None` when every
    /// candidate place is taken.
    pub fn place(&mut self, (x, y): (i32, i32), (w, h): (i32, i32)) -> Option<(i32, i32)> {
        let gap = 7;
        let candidates = [
            (x + gap, y - h - gap),
            (x + gap, y + gap),
            (x - w - gap, y - h - gap),
            (x - w - gap, y + gap),
            (x - w / 2, y - h - 2 * gap),
            (x - w / 2, y + 2 * gap),
            (x + gap, y - h - 3 * gap),
            (x - w - gap, y - h - 3 * gap),
        ];
        for (cx, cy) in candidates {
            let r = (cx, cy, cx + w, cy + h);
            let inside = r.0 >= self.area.0
                && r.1 >= self.area.1
                && r.2 <= self.area.2
                && r.3 <= self.area.3;
            if inside && !self.taken.iter().any(|&t| overlaps(t, r)) {
                self.taken.push((r.0 - 2, r.1 - 1, r.2 + 2, r.3 + 1));
                return Some((cx, cy));
            }
        }
        None
    }
}

/// The order in which points get a label: the recommended one, both ends, then evenly
/// spaced ones; at most `max`.
pub fn priority(len: usize, recommended: Option<usize>, max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = recommended.into_iter().collect();
    if len > 0 {
        v.extend([0, len - 1]);
    }
    let steps = max.max(2);
    v.extend((0..steps).map(|i| i * len.saturating_sub(1) / (steps - 1)));
    v.extend(0..len);
    let mut seen = std::collections::HashSet::new();
    v.retain(|i| *i < len && seen.insert(*i));
    v.truncate(max);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_never_overlap_and_crowded_ones_are_dropped() {
        let mut p = Placer::new((0, 0, 400, 300));
        let mut placed = Vec::new();
        for k in 0..40 {
            let pt = (20 + k * 3, 150);
            p.block_point(pt, 4);
            if let Some(c) = p.place(pt, (90, 14)) {
                placed.push((c.0, c.1, c.0 + 90, c.1 + 14));
            }
        }
        assert!(!placed.is_empty() && placed.len() < 40);
        for (i, a) in placed.iter().enumerate() {
            for b in &placed[i + 1..] {
                assert!(!overlaps(*a, *b), "{a:?} {b:?}");
            }
        }
        assert_eq!(priority(10, Some(4), 4), vec![4, 0, 9, 3]);
    }
}
