#!/usr/bin/env python3
"""Mine task-retrieval pairs from a repository's history: a commit's message
(the task's words) and the code files the commit changed (where the work
went), all searched at one snapshot commit before them.

The pairs are written in the SWE-bench cases format, so that
`lode bench swebench --cases PAIRS` scores every ranking on them and
`lode bench learn --cases PAIRS` fits task mode's weights. Only the
repositories of `../shared/eval/train-repos.txt` may be mined: they are
disjoint from every evaluation set.

One snapshot per repository keeps it to one index: the snapshot is the
first-parent commit `--back` commits before the newest, and a pair is a later
first-parent commit whose changed files all exist at the snapshot, with one
to four code files that are not tests, and a message of six words or more
that is not a release, dependency bump, revert or merge of branches.

    scripts/mine-commits.py --mirrors /path/to/mirrors --repos train-repos.txt \
        --out pairs.jsonl [--back 400] [--per-repo 120]
"""

import argparse
import json
import re
import subprocess
import sys

CODE_EXTENSIONS = {
    "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "rs",
    "java", "kt", "kts", "scala", "swift", "c", "h", "cc", "cpp", "cxx", "hpp",
    "hh", "hxx", "cs", "php", "rb", "ex", "exs", "hs", "lua", "zig", "sh", "bash",
    "vue", "svelte",
}
TEST_SEGMENTS = {"test", "tests", "__tests__", "spec", "specs", "testing", "testdata", "t"}
TRAILER = re.compile(r"^[A-Za-z][\w-]*(-by|-Id|-id|-authored-by)?:\s")
SKIP_SUBJECT = re.compile(
    r"^(bump|release|prepare|version|update (dependency|deps)|chore\(deps|revert|merge (branch|remote)|"
    r"\[skip|build\(deps|deps:|v?\d+\.\d+)",
    re.IGNORECASE,
)
PR_MERGE = re.compile(r"^Merge pull request #\d+ from \S+\s*$")


def git(mirror, *args):
    out = subprocess.run(
        ["git", "--git-dir", mirror, *args],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ).stdout
    return out.decode("utf-8", "replace")


def is_code(path):
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in CODE_EXTENSIONS


def is_test(path):
    segments = path.lower().split("/")
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    lower = stem.lower()
    return (
        any(s in TEST_SEGMENTS for s in segments[:-1])
        or lower.startswith("test_")
        or lower.endswith(("_test", "_tests", "_spec"))
        or stem.endswith(("Test", "Tests", "Spec"))
        or ".test." in name.lower()
        or ".spec." in name.lower()
    )


def clean_message(message):
    lines = []
    for line in message.splitlines():
        if PR_MERGE.match(line.strip()) or TRAILER.match(line.strip()):
            continue
        lines.append(line)
    return "\n".join(lines).strip()


def mine(mirror, repo, language, back, per_repo):
    history = git(mirror, "rev-list", "--first-parent", "HEAD").split()
    # A short history: the snapshot halfway.
    back = min(back, len(history) // 2)
    if back == 0:
        return []
    snapshot = history[back]
    at_snapshot = set(git(mirror, "ls-tree", "-r", "--name-only", snapshot).splitlines())
    pairs = []
    # Oldest first: the commits closest to the snapshot see the tree it holds.
    for commit in reversed(history[:back]):
        parents = git(mirror, "rev-list", "--parents", "-n", "1", commit).split()[1:]
        if not parents:
            continue
        changed = git(
            mirror, "diff-tree", "--no-commit-id", "--name-status", "-r", parents[0], commit
        ).splitlines()
        files = []
        ok = True
        for row in changed:
            status, _, path = row.partition("\t")
            path = path.split("\t")[-1]
            if status.startswith("M") and path in at_snapshot:
                files.append(path)
            elif is_code(path) and not is_test(path):
                ok = False  # a new, deleted or renamed code file: not findable at the snapshot
        code = [f for f in files if is_code(f) and not is_test(f)]
        if not ok or not 1 <= len(code) <= 4:
            continue
        message = clean_message(git(mirror, "log", "-1", "--format=%B", commit))
        subject = message.splitlines()[0] if message else ""
        if len(message.split()) < 6 or SKIP_SUBJECT.match(subject):
            continue
        owner, name = repo.split("/")
        pairs.append(
            {
                "instance_id": f"{owner}__{name}-{commit[:10]}",
                "language": language,
                "repo": repo,
                "base_commit": snapshot,
                "query": message,
                "gold_files": files,
                "gold_code_files": code,
                "gold_symbols": {},
            }
        )
        if len(pairs) >= per_repo:
            break
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", required=True, help="bare mirrors: DIR/<owner>+<name>/repo")
    ap.add_argument("--repos", required=True, help="train-repos.txt: `owner/name language` lines")
    ap.add_argument("--out", required=True)
    ap.add_argument("--back", type=int, default=400, help="the snapshot: this many commits back")
    ap.add_argument("--per-repo", type=int, default=120)
    ap.add_argument("--only", default="", help="comma-separated owner/name")
    args = ap.parse_args()
    only = {r for r in args.only.split(",") if r}
    total = 0
    with open(args.out, "w") as out:
        for line in open(args.repos):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            repo, language = line.split()
            if only and repo not in only:
                continue
            mirror = f"{args.mirrors}/{repo.replace('/', '+')}/repo"
            try:
                pairs = mine(mirror, repo, language, args.back, args.per_repo)
            except subprocess.CalledProcessError as e:
                print(f"{repo}: skipped ({e})", file=sys.stderr)
                continue
            for p in pairs:
                out.write(json.dumps(p) + "\n")
            total += len(pairs)
            print(f"{repo}: {len(pairs)} pairs", file=sys.stderr)
    print(f"{total} pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
