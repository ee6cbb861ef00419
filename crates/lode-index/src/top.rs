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
/// Pairs tied with the `limit`-th are kept too, up to `limit` more: chunk ids
/// follow the order rows were written, which differs between an updated
/// index and a fresh build of one tree, so an id must not choose which of two
/// equal scores makes the cut (ranks fused downstream would differ).
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
        let mut tied = Tied::new(limit);
        for r in scored {
            if heap.len() < limit {
                heap.push(r);
                continue;
            }
            let Some(mut worst) = heap.peek_mut() else {
                continue;
            };
            if r < *worst {
                let out = std::mem::replace(&mut *worst, r);
                drop(worst);
                tied.push_if_tied(out, heap.peek());
            } else {
                tied.push_if_tied(r, Some(&*worst));
            }
        }
        let floor = heap.peek().copied();
        let mut all = heap.into_sorted_vec();
        all.extend(tied.at(floor));
        all.sort_unstable();
        all
    };
    sorted
        .into_iter()
        .map(|Ranked(id, score)| (id, score))
        .collect()
}

/// Pairs left out of the heap whose score equals its worst's: all of one
/// score, at most `cap` (the lowest ids when more tie).
struct Tied {
    pairs: Vec<Ranked>,
    cap: usize,
}

impl Tied {
    fn new(cap: usize) -> Tied {
        Tied {
            pairs: Vec::new(),
            cap,
        }
    }

    /// Keeps `r` when it ties `worst`; forgets those `worst` now beats.
    fn push_if_tied(&mut self, r: Ranked, worst: Option<&Ranked>) {
        let Some(worst) = worst else { return };
        let same = |a: &Ranked| a.1.total_cmp(&worst.1) == Ordering::Equal;
        if self.pairs.first().is_some_and(|p| !same(p)) {
            self.pairs.clear();
        }
        if same(&r) {
            self.pairs.push(r);
            if self.pairs.len() > 2 * self.cap {
                self.pairs.sort_unstable();
                self.pairs.truncate(self.cap);
            }
        }
    }

    /// Those still tied with the final worst, at most `cap`.
    fn at(mut self, worst: Option<Ranked>) -> Vec<Ranked> {
        let Some(worst) = worst else {
            return Vec::new();
        };
        self.pairs
            .retain(|p| p.1.total_cmp(&worst.1) == Ordering::Equal);
        self.pairs.sort_unstable();
        self.pairs.truncate(self.cap);
        self.pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full sort by score, ties by id, cut to `limit` and the ties of the
    /// `limit`-th (at most `limit` of them).
    fn by_full_sort(mut v: Vec<(i64, f64)>, limit: usize) -> Vec<(i64, f64)> {
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if limit > 0 && v.len() > limit {
            let cut = v[limit - 1].1;
            let tied = v[limit..]
                .iter()
                .take_while(|p| p.1.total_cmp(&cut).is_eq())
                .count()
                .min(limit);
            v.truncate(limit + tied);
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
    fn ties_within_the_cut_are_ordered_by_the_lower_id() {
        let v = vec![(5, 1.0), (2, 1.0), (9, 3.0), (1, 0.5), (3, 2.0)];
        assert_eq!(best(v, 3), [(9, 3.0), (3, 2.0), (2, 1.0), (5, 1.0)]);
    }

    #[test]
    fn ties_at_the_cut_are_all_kept_so_ids_choose_nothing() {
        // Chunk ids differ between an updated index and a fresh build of the
        // same tree; which of two equal scores makes the cut must not.
        let v = vec![(5, 1.0), (2, 1.0), (9, 3.0), (1, 0.5), (3, 1.0)];
        assert_eq!(best(v.clone(), 2), [(9, 3.0), (2, 1.0), (3, 1.0), (5, 1.0)]);
        let renumbered: Vec<(i64, f64)> = v.iter().map(|&(id, s)| (100 - id, s)).collect();
        let got: Vec<u64> = best(renumbered, 2).iter().map(|p| p.1.to_bits()).collect();
        let want: Vec<u64> = best(v, 2).iter().map(|p| p.1.to_bits()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ties_at_the_cut_are_bounded() {
        let v: Vec<(i64, f64)> = (0..1000).map(|id| (id, 1.0)).collect();
        assert_eq!(best(v, 10).len(), 20);
    }
}
