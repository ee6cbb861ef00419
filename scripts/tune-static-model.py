#!/usr/bin/env python3
"""Tune the built-in static model's token vectors for code, on CPU, from the training
repositories' histories only — and probe the dense side alone on a case set.

`scripts/build-default-model.sh` runs `mine`, `train` and `export` on the distilled model to
make the built-in one (crates/lode-embed/model/MODEL_CARD.md); docs/benchmarks.md, "Tuning
the static model for code", has the measurements. The steps:

    tune-static-model.py mine  --mirrors DIR --repos train-repos.txt --out train.jsonl [--heads F]
    tune-static-model.py train --pairs train.jsonl --out tuned.npy [--epochs 4]
    tune-static-model.py probe --cases cases.jsonl --mirrors DIR --cache probe.pkl base tuned.npy
    tune-static-model.py export --vectors tuned.npy --out DIR

`mine` takes commits OLDER than the snapshot `mine-commits.py` searches at (`--back`
first-parent commits before the newest), so its pairs never overlap the mined evaluation
pairs: a commit message, and the chunk of the parent's file holding the most changed lines
of each changed code file (one to four, tests aside). `train` fits the 29,525 × 256 token
vectors with InfoNCE (mean pooling as model2vec; the query as the three views task mode
embeds), each batch from one repository so that the negatives are its other files, and
another chunk of each positive's file; `--model` (default: the built-in model) names the
model tuned from, as the build script passes the distilled one. `probe` ranks each case's
code files by their best chunk's summed similarity to the three views — a simplified
stand-in for lode's chunks (blocks split at definition-like lines), the same for every model
compared. Needs numpy, tokenizers, safetensors, and torch for `train`.
"""

import argparse
import importlib.util
import json
import os
import pickle
import random
import re
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "crates", "lode-embed", "model")

_spec = importlib.util.spec_from_file_location("mine_commits", os.path.join(HERE, "mine-commits.py"))
mc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mc)

CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
WORD = re.compile(r"\w+")
CODEY = re.compile(r"[A-Za-z_][\w.:]*(?:_[\w]+|[a-z][A-Z]\w*|\.\w+|::\w+|\(\))")
DEFINITION = re.compile(
    r"^\s{0,4}(def|class|fn|func|function|pub|public|private|protected|static|async|export|"
    r"impl|struct|interface|type|const|enum|module|template|void|int|bool|char|size_t|"
    r"unsigned|inline)\b"
)


def split_word(w):
    """As lode's `split_identifiers`: a compound identifier written out as words."""
    if not ("_" in w or re.search(r"[a-z][A-Z]", w) or re.search(r"[A-Z][A-Z][a-z]", w)):
        return w
    parts = [p for seg in w.split("_") for p in CAMEL.findall(seg)]
    return " ".join(p.lower() for p in parts)


def split_identifiers(text):
    return WORD.sub(lambda m: split_word(m.group(0)), text)


def chunks(path, text, min_lines=6, max_lines=60):
    """(first line, last line, text to embed) of each block, split at definition-like lines."""
    lines = text.split("\n")
    out, start = [], 0
    for i in range(1, len(lines) + 1):
        if i < len(lines):
            at_definition = lines[i].strip() and DEFINITION.match(lines[i])
            if not ((at_definition and i - start >= min_lines) or i - start >= max_lines):
                continue
        body = "\n".join(lines[start:i])
        if body.strip():
            head = next(l.strip() for l in lines[start:i] if l.strip())
            out.append((start + 1, i, f"{path}\n{head[:100]}\n{body[:2000]}"))
        start = i
    return out


def views(task):
    """The three texts task mode embeds: the whole, the title, the title with the names."""
    lines = task.strip().split("\n")
    title, rest = lines[0], "\n".join(lines[1:])
    names = []
    for m in CODEY.finditer(task):
        w = m.group(0).rstrip("()")
        if w not in names:
            names.append(w)
    named = title + " " + " ".join(names[:30])
    return [named + " " + rest[:1000], title, named]


class Tokens:
    def __init__(self, model):
        from tokenizers import Tokenizer

        self.t = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
        self.t.no_truncation()
        self.t.no_padding()

    def ids(self, texts):
        enc = self.t.encode_batch([split_identifiers(t) for t in texts], add_special_tokens=False)
        return [np.array(e.ids[:512], dtype=np.int32) for e in enc]


def load_vectors(model):
    from safetensors.numpy import load_file

    e = load_file(os.path.join(model, "model.safetensors"))["embeddings"].astype(np.float32)
    return e / np.abs(e).max()


def embed(vectors, id_lists):
    out = np.zeros((len(id_lists), vectors.shape[1]), dtype=np.float32)
    for i, ids in enumerate(id_lists):
        if len(ids):
            out[i] = vectors[ids].mean(0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return out / norms


class Blobs:
    """`git cat-file --batch`: texts by object name, binaries and huge files left out."""

    def __init__(self, mirror):
        self.p = subprocess.Popen(["git", "--git-dir", mirror, "cat-file", "--batch"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def text(self, spec, limit=400_000):
        self.p.stdin.write((spec + "\n").encode())
        self.p.stdin.flush()
        header = self.p.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            return None
        data = self.p.stdout.read(int(header[2]))
        self.p.stdout.read(1)
        if len(data) > limit or b"\0" in data[:8000]:
            return None
        return data.decode("utf-8", "replace")


def mirror_of(mirrors, repo):
    return os.path.join(mirrors, repo.replace("/", "+"), "repo")


def mine_repo(mirror, repo, head, back, span, cap):
    history = mc.git(mirror, "rev-list", "--first-parent", head).split()
    first = min(back, len(history) // 2) + 1
    blobs = Blobs(mirror)
    out = []
    for commit in history[first:first + span]:
        parents = mc.git(mirror, "rev-list", "--parents", "-n", "1", commit).split()[1:]
        if not parents:
            continue
        parent = parents[0]
        files, ok = [], True
        for row in mc.git(mirror, "diff-tree", "--no-commit-id", "--name-status", "-r",
                          parent, commit).splitlines():
            status, _, path = row.partition("\t")
            path = path.split("\t")[-1]
            if mc.is_code(path) and not mc.is_test(path):
                ok = ok and status.startswith("M")
                files.append(path)
        if not ok or not 1 <= len(files) <= 4:
            continue
        message = mc.clean_message(mc.git(mirror, "log", "-1", "--format=%B", commit))
        subject = message.splitlines()[0] if message else ""
        if len(message.split()) < 6 or mc.SKIP_SUBJECT.match(subject):
            continue
        for path in files:
            text = blobs.text(f"{parent}:{path}")
            changed = {n for a, b in mc.changed_lines(mirror, parent, commit, path)
                       for n in range(a, b + 1)}
            blocks = chunks(path, text) if text else []
            if len(blocks) < 2 or not changed:
                continue
            overlap = [len(changed & set(range(s, e + 1))) for s, e, _ in blocks]
            best = max(range(len(blocks)), key=overlap.__getitem__)
            if overlap[best]:
                others = [b[2] for i, b in enumerate(blocks) if i != best]
                out.append({"repo": repo, "commit": commit, "query": message, "path": path,
                            "positive": blocks[best][2],
                            "negative": random.Random(commit).choice(others)})
        if len(out) >= cap:
            break
    return out


def cmd_mine(a):
    repos = [l.split()[0] for l in open(a.repos) if l.strip() and not l.startswith("#")]
    heads = dict(l.split() for l in open(a.heads) if l.strip()) if a.heads else {}
    with open(a.out, "w") as w:
        for repo in repos:
            mirror = mirror_of(a.mirrors, repo)
            head = heads.get(repo) or mc.git(mirror, "rev-parse", "HEAD").strip()
            pairs = mine_repo(mirror, repo, head, a.back, a.span, a.per_repo)
            for p in pairs:
                w.write(json.dumps(p) + "\n")
            print(f"{repo}\t{head}\t{len(pairs)} pairs", file=sys.stderr, flush=True)


def cmd_train(a):
    import torch

    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    torch.set_num_threads(os.cpu_count() or 1)
    tokens = Tokens(a.model)
    rows = [json.loads(l) for l in open(a.pairs)]
    queries = [tokens.ids(views(r["query"])) for r in rows]
    positives = tokens.ids([r["positive"] for r in rows])
    negatives = tokens.ids([r["negative"] for r in rows])
    start = torch.tensor(load_vectors(a.model))
    weights = torch.nn.Parameter(start.clone())
    opt = torch.optim.Adam([weights], lr=a.lr)

    def bag(id_lists):
        ids = [torch.from_numpy(x.astype(np.int64)) if len(x) else torch.tensor([0]) for x in id_lists]
        offsets = torch.tensor([0] + [len(x) for x in ids[:-1]]).cumsum(0)
        v = torch.nn.functional.embedding_bag(torch.cat(ids), weights, offsets, mode="mean")
        return torch.nn.functional.normalize(v, dim=1)

    by_repo = defaultdict(list)
    for i, r in enumerate(rows):
        by_repo[r["repo"]].append(i)
    t0 = time.time()
    for epoch in range(a.epochs):
        batches = []
        for members in by_repo.values():
            members = members[:]
            rng.shuffle(members)
            batches += [members[j:j + a.batch] for j in range(0, len(members), a.batch)]
        rng.shuffle(batches)
        total = 0.0
        for b in (b for b in batches if len(b) >= 8):
            q = bag([v for i in b for v in queries[i]]).view(len(b), 3, -1).sum(1)
            # The batch's positives, then another chunk of each one's file.
            docs = bag([positives[i] for i in b] + [negatives[i] for i in b])
            logits = torch.nn.functional.normalize(q, dim=1) @ docs.T / a.tau
            # Another file of the same commit is no negative.
            same = torch.tensor([[x != y and y < len(b) and rows[i]["commit"] == rows[b[y]]["commit"]
                                  for y in range(2 * len(b))] for x, i in enumerate(b)])
            loss = torch.nn.functional.cross_entropy(logits.masked_fill(same, -1e4),
                                                     torch.arange(len(b)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        print(f"epoch {epoch + 1}: loss {total / len(rows):.4f} ({time.time() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    np.save(a.out, weights.detach().numpy())


def probe_cache(a):
    if os.path.exists(a.cache):
        with open(a.cache, "rb") as f:
            return pickle.load(f)
    tokens = Tokens(a.model)
    cases = [json.loads(l) for l in open(a.cases)]
    blobs, trees, queries = {}, {}, {}
    for c in cases:
        key = (c["repo"], c["base_commit"])
        mirror = mirror_of(a.mirrors, c["repo"])
        if key not in trees:
            rows = []
            for line in mc.git(mirror, "ls-tree", "-r", c["base_commit"]).splitlines():
                meta, _, path = line.partition("\t")
                _, kind, blob = meta.split()
                if kind == "blob" and mc.is_code(path):
                    rows.append((path, blob))
            trees[key] = rows
            reader = Blobs(mirror)
            for path, blob in rows:
                if blob not in blobs:
                    text = reader.text(blob)
                    blocks = chunks(path, text) if text else []
                    blobs[blob] = tokens.ids([b[2] for b in blocks]) if blocks else []
        queries[c["instance_id"]] = tokens.ids(views(c["query"]))
    cache = {"cases": cases, "blobs": blobs, "trees": trees, "queries": queries}
    with open(a.cache, "wb") as f:
        pickle.dump(cache, f)
    return cache


def probe(vectors, cache):
    """File R@1 / R@5 / R@10 by language ("all" first), each file by its best chunk."""
    dim = vectors.shape[1]
    chunk_vectors = {b: embed(vectors, ids) if ids else np.zeros((0, dim), np.float32)
                     for b, ids in cache["blobs"].items()}
    sums = defaultdict(lambda: np.zeros(4))
    for c in cache["cases"]:
        q = embed(vectors, cache["queries"][c["instance_id"]]).sum(0)
        scored = sorted(((float((chunk_vectors[b] @ q).max()), p)
                         for p, b in cache["trees"][(c["repo"], c["base_commit"])]
                         if len(chunk_vectors[b])), reverse=True)
        top = [p for _, p in scored[:10]]
        gold = c.get("gold_code_files") or c["gold_files"]
        found = [sum(g in top[:k] for g in gold) / max(len(gold), 1) for k in (1, 5, 10)]
        for lang in ("all", c.get("language", "")):
            sums[lang] += [1, *found]
    return {lang: (int(s[0]), *(round(x / s[0], 3) for x in s[1:])) for lang, s in sums.items()}


def cmd_export(a):
    """A model2vec directory: the tuned vectors as int8 (as the built-in model stores its
    own), the tokenizer and config of the model tuned from."""
    import shutil
    from safetensors.numpy import save_file

    vectors = np.load(a.vectors)
    scaled = np.round(vectors / np.abs(vectors).max() * 127)
    os.makedirs(a.out, exist_ok=True)
    save_file({"embeddings": np.clip(scaled, -127, 127).astype(np.int8)},
              os.path.join(a.out, "model.safetensors"))
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(os.path.join(a.model, name), os.path.join(a.out, name))


def cmd_probe(a):
    cache = probe_cache(a)
    for m in a.models:
        vectors = load_vectors(a.model) if m == "base" else np.load(m)
        print(json.dumps({"model": m, "r1_r5_r10": probe(vectors, cache)}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=MODEL, help="the model2vec directory tuned from")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mine")
    m.add_argument("--mirrors", required=True, help="bare mirrors: DIR/<owner>+<name>/repo")
    m.add_argument("--repos", required=True, help="train-repos.txt")
    m.add_argument("--out", required=True)
    m.add_argument("--back", type=int, default=400, help="as mine-commits.py's snapshot")
    m.add_argument("--span", type=int, default=3000, help="older commits read per repository")
    m.add_argument("--per-repo", type=int, default=700)
    m.add_argument("--heads", help="`owner/name commit` lines: where each history ends "
                   "(default: the mirror's HEAD)")
    t = sub.add_parser("train")
    t.add_argument("--pairs", required=True)
    t.add_argument("--out", required=True, help="the tuned vectors, .npy")
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--tau", type=float, default=0.05)
    t.add_argument("--batch", type=int, default=64)
    t.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("probe")
    p.add_argument("--cases", required=True)
    p.add_argument("--mirrors", required=True)
    p.add_argument("--cache", required=True, help="tokenized chunks, reused across runs")
    p.add_argument("models", nargs="+", help="`base` (the built-in) or a .npy from train")
    e = sub.add_parser("export")
    e.add_argument("--vectors", required=True, help="a .npy from train")
    e.add_argument("--out", required=True, help="the model2vec directory to write")
    a = ap.parse_args()
    {"mine": cmd_mine, "train": cmd_train, "probe": cmd_probe, "export": cmd_export}[a.cmd](a)


if __name__ == "__main__":
    main()
