//! A shard node's reply, made to fit one NATS message.
//!
//! A partition's answer holds every one of its repositories' answers, and a
//! message is bounded (the server's `max_payload`, 1 MiB by default): a
//! search over many repositories with a large `top_k` or a grep with many
//! groups would not fit, and a reply that cannot be sent leaves the
//! partition missing. So a search reply keeps only the partition's best
//! `top_k` hits (the coordinator keeps no more of all partitions, so the
//! merged answer is the same), and any reply still too large loses items
//! from the end of its largest answers, each answer so cut saying
//! `"cut": true`; one with nothing to cut (a body) becomes `{"too_large": …}`.

use serde_json::Value;

use crate::answers::merge_order;
use crate::serve::{Command, PartitionAnswer, RepoAnswer};

/// What a reply leaves room for besides its answers (the envelope, the
/// message's headers).
const MARGIN: usize = 4 << 10;
/// What an answer too large to send, with nothing to cut, is replaced by.
pub(crate) const TOO_LARGE: &str = "too_large";
/// The lists an answer can be cut in, tried in this order.
const LISTS: [&str; 5] = ["hits", "groups", "files", "symbols", "lines"];

/// `reply` to `command`, cut to at most `max_bytes` serialized.
pub(crate) fn fit(reply: &mut PartitionAnswer, command: Command, top_k: usize, max_bytes: usize) {
    if command == Command::Search {
        keep_best(&mut reply.repos, top_k);
    }
    let limit = max_bytes.saturating_sub(MARGIN);
    loop {
        let sizes: Vec<usize> = reply.repos.iter().map(size).collect();
        let total: usize = sizes.iter().sum::<usize>() + size_of_rest(reply);
        if total <= limit {
            return;
        }
        let over = total - limit;
        // The largest answer that can still be cut loses about what is over.
        let cuttable =
            (0..reply.repos.len()).filter(|&i| list_of(&reply.repos[i].answer).is_some());
        if let Some(i) = cuttable.max_by_key(|&i| (sizes[i], std::cmp::Reverse(i))) {
            cut(&mut reply.repos[i].answer, over, sizes[i]);
            continue;
        }
        // Nothing left to cut: the largest answer says it was too large.
        let largest = (0..reply.repos.len())
            .filter(|&i| reply.repos[i].answer.get(TOO_LARGE).is_none())
            .max_by_key(|&i| (sizes[i], std::cmp::Reverse(i)));
        match largest {
            Some(i) => {
                let why = format!(
                    "an answer of {} bytes, over a message's {max_bytes}",
                    sizes[i]
                );
                reply.repos[i].answer = serde_json::json!({ TOO_LARGE: why });
            }
            None => {
                reply.repos.clear();
                reply.error = Some(format!("answers over {max_bytes} bytes"));
                return;
            }
        }
    }
}

/// Keeps the `top_k` best hits of all the answers, in the merge's order
/// ([`merge_order`]).
fn keep_best(repos: &mut [RepoAnswer], top_k: usize) {
    let mut all: Vec<(Value, usize, usize)> = Vec::new();
    for (r, a) in repos.iter().enumerate() {
        for (h, hit) in a.answer["hits"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            // Only what the order reads: the score, the repository, the path.
            let key =
                serde_json::json!({"score": hit["score"], "repo": a.repo, "path": hit["path"]});
            all.push((key, r, h));
        }
    }
    if all.len() <= top_k {
        return;
    }
    all.sort_by(|a, b| merge_order(&a.0, &b.0));
    let kept: std::collections::BTreeSet<(usize, usize)> =
        all.iter().take(top_k).map(|&(_, r, h)| (r, h)).collect();
    for (r, a) in repos.iter_mut().enumerate() {
        if let Some(hits) = a.answer.get_mut("hits").and_then(Value::as_array_mut) {
            let mut h = 0;
            hits.retain(|_| {
                h += 1;
                kept.contains(&(r, h - 1))
            });
        }
    }
}

fn size(a: &RepoAnswer) -> usize {
    serde_json::to_vec(a).map_or(0, |v| v.len())
}

fn size_of_rest(reply: &PartitionAnswer) -> usize {
    let rest = PartitionAnswer {
        repos: Vec::new(),
        ..reply.clone()
    };
    serde_json::to_vec(&rest).map_or(0, |v| v.len())
}

/// The first non-empty list of an answer.
fn list_of(answer: &Value) -> Option<&'static str> {
    LISTS
        .into_iter()
        .find(|k| answer[*k].as_array().is_some_and(|l| !l.is_empty()))
}

/// Drops items from the end of the answer's list, about `over` bytes of
/// its `size` (at least one item).
fn cut(answer: &mut Value, over: usize, size: usize) {
    let Some(key) = list_of(answer) else {
        return;
    };
    if let Some(list) = answer[key].as_array_mut() {
        let share = over as f64 / size.max(1) as f64;
        let drop = ((list.len() as f64 * share).ceil() as usize).clamp(1, list.len());
        list.truncate(list.len() - drop);
    }
    answer["cut"] = Value::Bool(true);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reply(answers: Vec<(&str, Value)>) -> PartitionAnswer {
        PartitionAnswer {
            partition: 3,
            node: "n".into(),
            repos: answers
                .into_iter()
                .map(|(repo, answer)| RepoAnswer {
                    repo: repo.into(),
                    commit: "c".repeat(40),
                    answer,
                })
                .collect(),
            loading: Vec::new(),
            error: None,
        }
    }

    fn hits(n: usize, best: f64) -> Value {
        let hits: Vec<Value> = (0..n)
            .map(|i| {
                json!({"path": format!("f{i}.py"), "score": best - i as f64,
                            "snippet": "x".repeat(200)})
            })
            .collect();
        json!({ "hits": hits })
    }

    fn paths(r: &PartitionAnswer, i: usize) -> Vec<String> {
        (r.repos[i].answer["hits"].as_array().unwrap().iter())
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_search_keeps_the_partitions_best_hits_as_the_merge_would() {
        let mut r = reply(vec![("a", hits(5, 10.0)), ("b", hits(5, 8.5))]);
        fit(&mut r, Command::Search, 4, 1 << 20);
        // a: 10 9 8 7 6, b: 8.5 7.5 …: the best four are 10, 9, 8.5, 8.
        assert_eq!(paths(&r, 0), ["f0.py", "f1.py", "f2.py"]);
        assert_eq!(paths(&r, 1), ["f0.py"]);
        assert!(r.repos[0].answer.get("cut").is_none(), "not cut for size");
    }

    #[test]
    fn an_answer_over_the_limit_is_cut_from_the_end_of_its_largest_lists() {
        let groups: Vec<Value> = (0..400)
            .map(|i| {
                json!({"path": format!("g{i}.rs"),
            "lines": [{"line": 1, "text": "y".repeat(100)}]})
            })
            .collect();
        let mut r = reply(vec![
            ("a", json!({ "groups": groups })),
            ("b", json!({"groups": []})),
        ]);
        let whole = serde_json::to_vec(&r).unwrap().len();
        fit(&mut r, Command::Grep, 10, 32 << 10);
        let now = serde_json::to_vec(&r).unwrap().len();
        assert!(
            now <= (32 << 10) - MARGIN && now > 16 << 10,
            "{whole} → {now}"
        );
        let kept = r.repos[0].answer["groups"].as_array().unwrap();
        assert_eq!(kept[0]["path"], "g0.rs", "the first groups stay");
        assert_eq!(r.repos[0].answer["cut"], true);
        assert!(r.error.is_none());
    }

    #[test]
    fn an_answer_that_cannot_be_cut_says_it_was_too_large() {
        let mut r = reply(vec![
            ("a", json!({"text": "z".repeat(10_000)})),
            ("b", json!({"text": "short"})),
        ]);
        fit(&mut r, Command::Show, 1, 8 << 10);
        assert!(r.error.is_none());
        let why = r.repos[0].answer[TOO_LARGE].as_str().unwrap();
        assert!(why.starts_with("an answer of 100"), "{why}");
        assert_eq!(r.repos[1].answer["text"], "short", "the others stay whole");
        let mut r = reply(vec![("a", json!({"text": "z".repeat(10_000)}))]);
        fit(&mut r, Command::Show, 1, 100);
        assert!(r.repos.is_empty());
        assert_eq!(r.error.as_deref(), Some("answers over 100 bytes"));
    }
}
