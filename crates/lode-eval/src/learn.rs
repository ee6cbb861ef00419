//! Learning a ranking's weights from labelled candidate lists.
//!
//! Each [`Query`] is a list of candidates, each a feature vector and
//! whether it is a gold answer. A scoring function turns weights and
//! features into a score; [`coordinate_ascent`] moves one weight at a time
//! to the value that most improves the [`Objective`] over the training
//! queries, round after round, until nothing improves. It is deterministic
//! (candidate values and dimensions are tried in order, ties keep the
//! earlier value), and it knows nothing of what the features mean.

use serde::Serialize;

/// One labelled query: its candidates and how many gold answers it has in
/// all (some may be missing from the candidates).
#[derive(Clone, Debug)]
pub struct Query {
    /// What it belongs to (a repository), for held-out splits.
    pub group: String,
    /// Each candidate's features, and whether it is a gold file.
    pub candidates: Vec<(Vec<f64>, bool)>,
    /// Gold files in all, among the candidates or not (recall's denominator).
    pub gold: usize,
}

/// File-ranking measures over queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Objective {
    /// Queries scored.
    pub queries: usize,
    /// Mean share of a query's gold files in its first file.
    pub recall_at_1: f64,
    /// The same in the first five.
    pub recall_at_5: f64,
    /// The same in the first ten.
    pub recall_at_10: f64,
    /// Mean reciprocal rank of the first gold file within ten.
    pub mrr_at_10: f64,
}

impl Objective {
    /// What the ascent maximises for a file ranking: recall@5 first, then
    /// how soon the first answer comes, then recall@10.
    pub fn value(&self) -> f64 {
        self.recall_at_5 + 0.5 * self.mrr_at_10 + 0.25 * self.recall_at_10
    }

    /// What it maximises for the chunks of one file, of which a task search
    /// shows two or three: the first answer and how soon it comes, then
    /// recall@5.
    pub fn value_at_top(&self) -> f64 {
        self.recall_at_1 + self.mrr_at_10 + 0.5 * self.recall_at_5
    }
}

/// The measures of `weights` over `queries` under `score`.
pub fn evaluate(
    queries: &[&Query],
    weights: &[f64],
    score: &impl Fn(&[f64], &[f64]) -> f64,
) -> Objective {
    let mut o = Objective::default();
    let mut order: Vec<(f64, usize)> = Vec::new();
    for q in queries {
        order.clear();
        order.extend(
            q.candidates
                .iter()
                .enumerate()
                .map(|(i, (f, _))| (score(weights, f), i)),
        );
        // Best first; ties keep the candidates' given order.
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let gold_within = |k: usize| {
            order
                .iter()
                .take(k)
                .filter(|(s, i)| *s > 0.0 && q.candidates[*i].1)
                .count() as f64
        };
        let n = q.gold.max(1) as f64;
        o.queries += 1;
        o.recall_at_1 += gold_within(1) / n;
        o.recall_at_5 += gold_within(5) / n;
        o.recall_at_10 += gold_within(10) / n;
        if let Some(rank) = order
            .iter()
            .take(10)
            .position(|(s, i)| *s > 0.0 && q.candidates[*i].1)
        {
            o.mrr_at_10 += 1.0 / (rank + 1) as f64;
        }
    }
    let n = o.queries.max(1) as f64;
    o.recall_at_1 /= n;
    o.recall_at_5 /= n;
    o.recall_at_10 /= n;
    o.mrr_at_10 /= n;
    o
}

/// How [`coordinate_ascent`] searches: the values it tries for a weight,
/// how candidates are scored, what it maximises, and for how many rounds.
pub struct Ascent<C, S, V> {
    /// `candidates(dimension, current)`: the values to try.
    pub candidates: C,
    /// `score(weights, features)`.
    pub score: S,
    /// What is maximised, such as [`Objective::value`].
    pub value: V,
    /// Rounds at most.
    pub rounds: usize,
}

/// Moves each weight in turn to the best of `candidates(dimension, current)`
/// (the current value stays unless one does strictly better) until a round
/// improves nothing (or `rounds` rounds). Returns the weights.
pub fn coordinate_ascent<C, S, V>(
    queries: &[&Query],
    init: &[f64],
    ascent: &Ascent<C, S, V>,
) -> Vec<f64>
where
    C: Fn(usize, f64) -> Vec<f64>,
    S: Fn(&[f64], &[f64]) -> f64,
    V: Fn(&Objective) -> f64,
{
    let Ascent {
        candidates,
        score,
        value: objective,
        rounds,
    } = ascent;
    let mut w = init.to_vec();
    let mut best = objective(&evaluate(queries, &w, score));
    for _ in 0..*rounds {
        let mut improved = false;
        for d in 0..w.len() {
            let mut chosen = w[d];
            for v in candidates(d, w[d]) {
                let before = std::mem::replace(&mut w[d], v);
                let value = objective(&evaluate(queries, &w, score));
                w[d] = before;
                if value > best + 1e-9 {
                    best = value;
                    chosen = v;
                    improved = true;
                }
            }
            w[d] = chosen;
        }
        if !improved {
            break;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(w: &[f64], f: &[f64]) -> f64 {
        w.iter().zip(f).map(|(a, b)| a * b).sum()
    }

    /// Feature 0 is noise, feature 1 finds the gold answer.
    fn queries() -> Vec<Query> {
        (0..10)
            .map(|i| Query {
                group: format!("r{}", i % 2),
                candidates: vec![
                    (vec![1.0, 0.1], false),
                    (vec![0.9, 0.2], false),
                    (vec![0.2, 1.0], true),
                ],
                gold: 1,
            })
            .collect()
    }

    #[test]
    fn the_ascent_finds_the_feature_that_separates_gold() {
        let qs = queries();
        let refs: Vec<&Query> = qs.iter().collect();
        let start = evaluate(&refs, &[1.0, 0.1], &sum);
        assert_eq!(start.recall_at_1, 0.0);
        let ascent = Ascent {
            candidates: |_, v| vec![v * 0.0, v * 0.5, v * 2.0, v * 10.0, v * 30.0],
            score: sum,
            value: Objective::value,
            rounds: 5,
        };
        let w = coordinate_ascent(&refs, &[1.0, 0.1], &ascent);
        let end = evaluate(&refs, &w, &sum);
        assert_eq!(end.recall_at_1, 1.0, "{w:?}");
        assert!((end.mrr_at_10 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_gold_answer_missing_from_the_candidates_counts_against_recall() {
        let q = Query {
            group: String::new(),
            candidates: vec![(vec![1.0], true)],
            gold: 2,
        };
        let o = evaluate(&[&q], &[1.0], &sum);
        assert_eq!(o.recall_at_5, 0.5);
        assert_eq!(o.mrr_at_10, 1.0);
    }
}
