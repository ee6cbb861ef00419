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
that is not a release, dependency bump, revert or merge of branches. With
`--with-tests` a pair is a commit that also adds test code, and its query
is the message followed by the first lines it adds to the tests as a fenced
code block: a task with its reproduction, as issues are written.

Each pair also names the lines the commit changed, as the snapshot numbers
them (`gold_lines`: path → `[start, end]` spans; a pure insertion spans the
lines either side of it): the parent's lines are carried back to the
snapshot through the diff between the two, and a line changed in between is
left out. `lode bench learn --chunks` finds the chunks those lines fall in
and fits the chunk choice on them.

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
    """Whether `path` is a test file, by its directories or its name.

    >>> [is_test(p) for p in ("src/isMonday/test.ts", "tests/a.py", "src/a_test.go", "src/a.ts")]
    [True, True, True, False]
    """
    segments = path.lower().split("/")
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0]
    lower = stem.lower()
    return (
        any(s in TEST_SEGMENTS for s in segments[:-1])
        or lower in ("test", "tests", "spec")
        or lower.startswith("test_")
        or lower.endswith(("_test", "_tests", "_spec"))
        or stem.endswith(("Test", "Tests", "Spec"))
        or ".test." in name.lower()
        or ".spec." in name.lower()
    )


def clean_message(message):
    r"""The message without its trailers and pull-request merge lines.

    Trailers (`Signed-off-by: …`, `Change-Id: …`) are only those of the last
    paragraph, as git reads them: a subject written `area: summary` is the
    message's most telling line, not a trailer.

    >>> clean_message("syntax: remove deny(warnings)\n\nIt is annoying.")
    'syntax: remove deny(warnings)\n\nIt is annoying.'
    >>> clean_message("fix: a bug\n\nBody.\n\nSigned-off-by: A <a@b>\nChange-Id: I12")
    'fix: a bug\n\nBody.'
    >>> clean_message("Merge pull request #3 from a/b\n\nnet: retry dials")
    'net: retry dials'
    """
    lines = [l for l in message.strip().splitlines() if not PR_MERGE.match(l.strip())]
    while lines and not lines[0].strip():
        lines.pop(0)
    # The last paragraph is trailers when every line of it is one.
    last = len(lines)
    while last > 0 and lines[last - 1].strip():
        last -= 1
    tail = [l for l in lines[last:] if l.strip()]
    if last > 0 and tail and all(TRAILER.match(l.strip()) for l in tail):
        lines = lines[:last]
    return "\n".join(lines).strip()


HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def hunks(mirror, old, new, path):
    """`(old_start, old_count, new_start, new_count)` of each hunk of `path`."""
    out = []
    diff = git(mirror, "diff", "-U0", "--no-color", old, new, "--", path)
    for line in diff.splitlines():
        m = HUNK.match(line)
        if m:
            out.append(tuple(int(g) if g is not None else 1 for g in m.groups()))
    return out


def changed_lines(mirror, parent, commit, path):
    """The parent's lines `commit` changed in `path`, as inclusive spans."""
    spans = []
    for start, count, _, _ in hunks(mirror, parent, commit, path):
        if count == 0:
            # Lines inserted after `start`: the lines either side.
            spans.append([max(start, 1), start + 1])
        else:
            spans.append([start, start + count - 1])
    return spans


def line_back(line, between):
    """The snapshot's number for the parent's `line` (`between`: the hunks
    from the snapshot to the parent), or None when it changed in between.

    A line changed, two inserted after line 5, two deleted after line 2:

    >>> [line_back(n, [(2, 1, 2, 1)]) for n in (1, 2, 3)]
    [1, None, 3]
    >>> [line_back(n, [(5, 0, 6, 2)]) for n in (5, 6, 7, 8)]
    [5, None, None, 6]
    >>> [line_back(n, [(3, 2, 2, 0)]) for n in (2, 3)]
    [2, 5]
    """
    shift = 0
    for old_start, old_count, new_start, new_count in between:
        # A hunk's lines in the parent are new_start .. new_start + new_count - 1
        # (none for a deletion, which sits after new_start).
        first = new_start + 1 if new_count == 0 else new_start
        if line < first:
            break
        if line < first + new_count:
            return None
        old_first = old_start + 1 if old_count == 0 else old_start
        shift = (old_first + old_count) - (first + new_count)
    return line + shift


def lines_at_snapshot(mirror, snapshot, parent, commit, path):
    between = hunks(mirror, snapshot, parent, path)
    spans = []
    for start, end in changed_lines(mirror, parent, commit, path):
        a, b = line_back(start, between), line_back(end, between)
        if a is not None and b is not None and a <= b:
            spans.append([a, b])
    return spans


def added_test_code(mirror, parent, commit, tests, most=30):
    """The first `most` non-blank lines `commit` adds to the test files `tests`."""
    diff = git(mirror, "diff", "-U0", "--no-color", parent, commit, "--", *tests)
    added = [
        line[1:]
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++") and line[1:].strip()
    ]
    return added[:most]


def mine(mirror, repo, language, back, per_repo, with_tests=False):
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
        tests = []
        ok = True
        for row in changed:
            status, _, path = row.partition("\t")
            path = path.split("\t")[-1]
            if status[:1] in "AM" and is_code(path) and is_test(path):
                tests.append(path)
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
        if with_tests:
            # The test a fix adds reads as an issue's reproduction: the code that fails.
            test_code = added_test_code(mirror, parents[0], commit, tests) if tests else []
            if len(test_code) < 3:
                continue
            message = message + "\n\n```\n" + "\n".join(test_code) + "\n```\n"
        owner, name = repo.split("/")
        gold_lines = {f: lines_at_snapshot(mirror, snapshot, parents[0], commit, f) for f in code}
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
                "gold_lines": {f: s for f, s in gold_lines.items() if s},
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
    ap.add_argument(
        "--with-tests",
        action="store_true",
        help="only commits that add test code, appended to the message as a code block",
    )
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
                pairs = mine(mirror, repo, language, args.back, args.per_repo, args.with_tests)
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
