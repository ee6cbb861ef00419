#!/usr/bin/env python3
"""Bad luck, on purpose: kill -9 during builds, and random bytes flipped in a
checkpointed index, each trial checked against a fresh build of the same tree.

Usage: chaos.py LODE TREE [--kills N] [--flips N] [--seed S]

TREE is copied to a temporary directory (never changed in place). For each
kill trial, a build (fresh, or after a few edits) is killed after a random
delay; the next `lode index` must succeed and every probe query must answer
exactly as an index built from scratch. For each flip trial, 10 to 100 random
bytes of the checkpointed database are flipped; every probe must then either
answer exactly as the fresh index (an untouched page, or a rebuild), or fail
with a clear error; a different answer is a silent wrong answer, the one
outcome that must never happen. Prints one table, and exits 1 if a kill trial
failed or any answer was silently different.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROBES = [
    ["search", "parse the configuration file", "--json"],
    ["search", "error", "--json", "-k", "5"],
    ["grep", "def |fn |func ", "--json"],
    ["map", "--json"],
]


def run(lode, root, cache, args, timeout=300):
    return subprocess.run(
        [lode, *args, "--root", root, "--cache-dir", cache],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def answers(lode, root, cache):
    """The probes' JSON with timings and notes stripped (None on an error),
    and every probe's stderr."""

    out, stderr = [], []
    for probe in PROBES:
        r = run(lode, root, cache, probe)
        stderr.append(r.stderr)
        if r.returncode not in (0, 1):
            return None, r.stderr.strip().splitlines()[-1:] or ["exit %d" % r.returncode]
        try:
            v = json.loads(r.stdout)
        except ValueError:
            return None, ["not JSON"]
        for k in ("notes", "elapsed_ms", "ms", "query_ms"):
            v.pop(k, None)
        out.append(json.dumps(rounded(v), sort_keys=True))
    # Every probe's stderr: the one that met the damage says so, not the last.
    return out, "".join(stderr)


def rounded(v):
    """`v` with its floats to 9 significant digits: the sums of PageRank run
    in node order, which follows row ids, so an updated index and a fresh one
    may differ in the last bits while ranking alike."""
    if isinstance(v, float):
        return float("%.9g" % v)
    if isinstance(v, list):
        return [rounded(x) for x in v]
    if isinstance(v, dict):
        return {k: rounded(x) for k, x in v.items()}
    return v


def db_file(cache):
    for d in os.listdir(cache):
        cur = os.path.join(cache, d, "CURRENT")
        if os.path.exists(cur):
            return os.path.join(cache, d, open(cur).read().strip())
    return None


def edit(tree, rng):
    files = [
        os.path.join(dp, f)
        for dp, _, fs in os.walk(tree)
        if ".git" not in dp
        for f in fs
        if f.endswith((".py", ".rs", ".go", ".js", ".ts", ".c", ".java"))
    ]
    for path in rng.sample(files, min(3, len(files))):
        with open(path, "a") as f:
            f.write("\n# chaos %d\n" % rng.randrange(1 << 30))


def kill_trials(lode, tree, n, rng):
    ok = 0
    failures = []
    for i in range(n):
        cache = tempfile.mkdtemp(prefix="chaos-kill-")
        if i % 2:
            run(lode, tree, cache, ["index"])
            edit(tree, rng)
        p = subprocess.Popen(
            [lode, "index", "--root", tree, "--cache-dir", cache],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 2.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
        r = run(lode, tree, cache, ["index"])
        got, _ = answers(lode, tree, cache)
        fresh = tempfile.mkdtemp(prefix="chaos-ref-")
        run(lode, tree, fresh, ["index"])
        want, _ = answers(lode, tree, fresh)
        if r.returncode == 0 and got == want:
            ok += 1
        else:
            differ = [" ".join(PROBES[k][:2]) for k, (g, w) in enumerate(zip(got, want)) if g != w]
            failures.append("kill %d: exit %d, answers %s" % (i, r.returncode, differ or "same"))
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(fresh, ignore_errors=True)
    return ok, failures


def flip_trials(lode, tree, n, rng):
    base = tempfile.mkdtemp(prefix="chaos-base-")
    run(lode, tree, base, ["index"])
    want, _ = answers(lode, tree, base)
    outcomes = {"same": 0, "rebuilt, same": 0, "clear error": 0, "different": 0}
    different = []
    for i in range(n):
        cache = tempfile.mkdtemp(prefix="chaos-flip-")
        shutil.rmtree(cache)
        shutil.copytree(base, cache)
        db = db_file(cache)
        size = os.path.getsize(db)
        with open(db, "r+b") as f:
            for _ in range(rng.randint(10, 100)):
                at = rng.randrange(size)
                f.seek(at)
                b = f.read(1)
                f.seek(at)
                f.write(bytes([b[0] ^ (1 << rng.randrange(8))]))
        got, stderr = answers(lode, tree, cache)
        if got is None:
            outcomes["clear error"] += 1
        elif got == want:
            rebuilt = any(w in stderr for w in ("damaged", "unreadable", "rebuil"))
            outcomes["rebuilt, same" if rebuilt else "same"] += 1
        else:
            outcomes["different"] += 1
            which = [PROBES[j][0] + " " + PROBES[j][1] for j in range(len(want)) if got[j] != want[j]]
            different.append((i, which))
        shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    return outcomes, different


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lode")
    ap.add_argument("tree")
    ap.add_argument("--kills", type=int, default=30)
    ap.add_argument("--flips", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="chaos-tree-")
    tree = os.path.join(work, "tree")
    shutil.copytree(a.tree, tree, symlinks=True)
    ok, failures = kill_trials(a.lode, tree, a.kills, rng)
    outcomes, different = flip_trials(a.lode, tree, a.flips, rng)
    shutil.rmtree(work, ignore_errors=True)
    print("| trial | count | outcome |")
    print("|---|---:|---|")
    print("| kill -9 during a build, then `lode index` | %d | %d answer as a fresh build |" % (a.kills, ok))
    for k, v in outcomes.items():
        print("| 10–100 bytes flipped in the database | %d | %s: %d |" % (a.flips, k, v))
    for f in failures:
        print("failed:", f, file=sys.stderr)
    if different:
        print("silently different answers in flip trials:", different, file=sys.stderr)
    sys.exit(1 if failures or different else 0)


if __name__ == "__main__":
    main()
