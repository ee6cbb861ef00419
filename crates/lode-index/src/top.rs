//! The best few of many scored chunks: a search keeps a hundred or two of
//! the tens of thousands of chunks a common term touches.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A scored chunk ordered best first: higher score, then lower chunk id.
/// The order is total (`f64::total_cmp`, ids unique), so the best `limit`
/// are one set in one order however they are found.
#[derive(Clone, Copy, Debug)]
struct Ranked(i64, f64);

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> Ordering {
        other.1.total_cmp(&self.1).then(self.0.cmp(&other.0))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Ranked) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// The `limit` best `(chunk, score)` pairs, best first, ties by chunk id;
/// all of them, sorted, when `limit` is 0.
///
/// A heap of the `limit` best so far, its worst on top: most pairs lose to
/// that one comparison, and nothing is collected or moved for them.
pub fn best(scored: impl IntoIterator<Item = (i64, f64)>, limit: usize) -> Vec<(i64, f64)> {
    let scored = scored.into_iter().map(|(id, score)| Ranked(id, score));
    let sorted = if limit == 0 {
        let mut all: Vec<Ranked> = scored.collect();
        all.sort_unstable();
        all
    } else {
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::with_capacity(limit + 1);
        for r in scored {
            if heap.len() < limit {
                heap.push(r);
            } else if let Some(mut worst) = heap.peek_mut()
                && r < *worst
            {
                *worst = r;
            }
        }
        heap.into_sorted_vec()
    };
    sorted
        .into_iter()
        .map(|Ranked(id, score)| (id, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `best` replaced: a full sort by score, ties by id, cut to `limit`.
    fn by_full_sort(mut v: Vec<(i64, f64)>, limit: usize) -> Vec<(i64, f64)> {
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if limit > 0 {
            v.truncate(limit);
        }
        v
    }

    #[test]
    fn the_heap_keeps_what_a_full_sort_keeps_in_its_order_ties_included() {
        // Few distinct scores, so ties abound and straddle every cut; ids
        // shuffled so that input order says nothing.
        let mut v: Vec<(i64, f64)> = (0..500i64)
            .map(|i| ((i * 7919) % 500, f64::from((i * 31 % 13) as u8) * 0.5))
            .collect();
        v.push((900, 0.0));
        v.push((901, -0.0));
        for limit in [0, 1, 2, 10, 99, 100, 101, 499, 502, 1000] {
            let got = best(v.clone(), limit);
            let want = by_full_sort(v.clone(), limit);
            assert_eq!(got.len(), want.len(), "limit {limit}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.0, g.1.to_bits()), (w.0, w.1.to_bits()), "limit {limit}");
            }
        }
        assert_eq!(best(Vec::new(), 10), []);
    }

    #[test]
    fn ties_are_broken_by_the_lower_id() {
        let v = vec![(5, 1.0), (2, 1.0), (9, 3.0), (1, 0.5), (3, 1.0)];
        assert_eq!(best(v, 3), [(9, 3.0), (2, 1.0), (3, 1.0)]);
    }
}
