#!/usr/bin/env python3
"""The shared index cache against a real JetStream server.

Usage: remote-harness.py LODE NATS_SERVER

Starts nats-server with JetStream on 127.0.0.1 (a free port, a temporary
store) and drives `lode index --remote` on clones of one git fixture:

- two runners racing on one tree: exactly one builds and publishes, the other
  fetches its index; both answer searches exactly as a local build does;
- a commit later, a new runner starts from the ancestor's index and parses
  only the changed file; modified files start from HEAD's index and publish
  nothing;
- a build claimed by a runner that never finishes: the next one waits the
  configured time, then builds;
- a damaged part in the store: refused, built locally, answers unchanged;
- the server gone: two racing runners each build locally, with one note, exit 0, within
  seconds.

Every step is bounded in time; the first failed check exits 1. Needs the
`nats-py` client (for the claim and the damage it plants).
"""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEP_TIMEOUT = 120


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.email=h@h", "-c", "user.name=h", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


def fixture(root: Path):
    """A small multi-language repository, committed."""
    root.mkdir(parents=True)
    (root / "src").mkdir()
    for i in range(40):
        (root / "src" / f"mod{i}.py").write_text(
            f'"""Module {i}: parsing and loading of part {i}."""\n\n'
            f"def parse_part_{i}(text):\n"
            f"    tokens = text.split()\n"
            f"    return [t.upper() for t in tokens if len(t) > {i % 5}]\n\n\n"
            f"def load_part_{i}(path):\n"
            f"    with open(path) as f:\n"
            f"        return parse_part_{i}(f.read())\n"
        )
    (root / "src" / "lib.rs").write_text(
        "pub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n"
    )
    (root / "README.md").write_text("# fixture\n\nParses parts.\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fixture")


def clone(src: Path, dst: Path):
    git(src.parent, "clone", "-q", str(src), str(dst))


class Runner:
    def __init__(self, lode, work: Path, url, config_text=""):
        self.lode = lode
        self.work = work
        self.url = url
        self.config = work / "config.toml"
        self.config.write_text(config_text)

    def cmd(self, root: Path, cache: Path, *args, remote=True):
        argv = [self.lode, *args, "--json", "--root", str(root), "--cache-dir", str(cache),
                "--config", str(self.config)]
        if remote:
            argv += ["--remote", self.url]
        return argv

    def index(self, root, cache, remote=True):
        return run_json(self.cmd(root, cache, "index", remote=remote))

    def start_index(self, root, cache):
        return subprocess.Popen(self.cmd(root, cache, "index"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def search(self, root, cache, query):
        argv = [self.lode, "search", query, "--json", "--no-refresh", "--root", str(root),
                "--cache-dir", str(cache), "--config", str(self.config)]
        answer = run_json(argv, ok=(0, 1))
        return [(h["path"], h["start_line"], h["end_line"], round(h["score"], 6))
                for h in answer.get("hits", [])]


def run_json(argv, ok=(0,)):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    if p.returncode not in ok:
        fail(f"{' '.join(argv[:2])} exited {p.returncode}: {p.stderr.strip()[:500]}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"{' '.join(argv[:2])}: not JSON: {p.stdout[:300]!r}")


def finish(proc):
    out, err = proc.communicate(timeout=STEP_TIMEOUT)
    if proc.returncode != 0:
        fail(f"lode index exited {proc.returncode}: {err.strip()[:500]}")
    return json.loads(out)


QUERIES = ["parse part tokens", "load a file and parse it", "retry with backoff"]


def answers(runner, root, cache):
    return [runner.search(root, cache, q) for q in QUERIES]


async def nats_call(url, action):
    import nats

    nc = await nats.connect(url, connect_timeout=5)
    try:
        js = nc.jetstream()
        return await action(js)
    finally:
        await nc.close()


def plant_claim(url, key):
    async def act(js):
        kv = await js.key_value("lode-claims")
        await kv.create(key, b"a runner that never finishes")
    asyncio.run(nats_call(url, act))


def damage_part(url, shard):
    async def act(js):
        store = await js.object_store("lode-shards")
        name = f"{shard}.0"
        good = (await store.get(name)).data
        bad = bytearray(good)
        bad[len(bad) // 2] ^= 0xFF
        await store.put(name, bytes(bad))
    asyncio.run(nats_call(url, act))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    lode, nats_server = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = Path(tempfile.mkdtemp(prefix="lode-remote-"))
    port = free_port()
    url = f"nats://127.0.0.1:{port}"
    server = subprocess.Popen(
        [nats_server, "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(tmp / "js")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    fail("nats-server did not start")
                time.sleep(0.1)
        scenarios(lode, url, tmp, server)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("remote harness: all checks passed")


def scenarios(lode, url, tmp, server):
    origin = tmp / "origin"
    fixture(origin)
    runner = Runner(lode, tmp, url)

    # The reference: a local build, no cache.
    clone(origin, tmp / "local")
    local = runner.index(tmp / "local", tmp / "cache-local", remote=False)
    check("remote" not in local, "a build without --remote says nothing of a cache")
    want = answers(runner, tmp / "local", tmp / "cache-local")
    check(all(want), "the reference build answers every query")

    # Two runners race on one tree.
    clone(origin, tmp / "a")
    clone(origin, tmp / "b")
    pa = runner.start_index(tmp / "a", tmp / "cache-a")
    pb = runner.start_index(tmp / "b", tmp / "cache-b")
    ra, rb = finish(pa)["remote"], finish(pb)["remote"]
    outcomes = sorted([ra["outcome"], rb["outcome"]])
    check(outcomes.count("built") == 1, f"exactly one racing runner builds ({outcomes})")
    builder, other = (ra, rb) if ra["outcome"] == "built" else (rb, ra)
    check(other["outcome"] in ("waited", "hit"), f"the other fetches its index ({other['outcome']})")
    check(builder.get("published") and not other.get("published"), "only the builder publishes")
    check(other["fetched"]["shard"] == builder["published"]["shard"],
          "the fetched shard is the published one")
    for name in ("a", "b"):
        got = answers(runner, tmp / name, tmp / f"cache-{name}")
        check(got == want, f"runner {name} answers exactly as a local build")

    # A third runner on the same tree: a plain hit, nothing parsed.
    clone(origin, tmp / "c")
    c = runner.index(tmp / "c", tmp / "cache-c")
    check(c["remote"]["outcome"] == "hit" and c["parsed"] == 0,
          f"a later runner fetches and parses nothing ({c['remote']['outcome']}, {c['parsed']} parsed)")

    # A commit later: the ancestor's index, one file parsed, then published.
    changed = tmp / "c" / "src" / "mod3.py"
    changed.write_text(changed.read_text() + "\n\ndef parse_extra_part(text):\n    return text\n")
    git(tmp / "c", "commit", "-qam", "extra")
    clone(tmp / "c", tmp / "d")
    d = runner.index(tmp / "d", tmp / "cache-d")
    check(d["remote"]["outcome"] == "ancestor" and d["remote"]["fetched"]["commits_back"] == 1,
          f"the next commit starts from its parent's index ({d['remote']})")
    check(d["parsed"] == 1, f"only the changed file is parsed ({d['parsed']})")
    check(bool(d["remote"].get("published")), "the new commit's index is published")

    # Modified files: HEAD's index, the modified file parsed, never published.
    clone(tmp / "c", tmp / "e")
    (tmp / "e" / "src" / "mod5.py").write_text("def local_only_change():\n    return 5\n")
    e = runner.index(tmp / "e", tmp / "cache-e")
    check(e["remote"]["outcome"] == "hit" and e["remote"]["fetched"]["commits_back"] == 0
          and e["parsed"] == 1,
          f"modified files start from HEAD's index, the modified one parsed ({e['remote']}, "
          f"{e['parsed']} parsed)")
    hits = runner.search(tmp / "e", tmp / "cache-e", "local only change")
    check(bool(hits) and hits[0][0] == "src/mod5.py",
          f"and the modified file answers as it is now ({hits[:1]})")
    check(not e["remote"].get("published"), "an index of modified files is not published")

    # A claim that never ends: wait the configured time, then build here (from
    # the parent's index).
    (tmp / "f").mkdir()
    fixture(tmp / "f" / "repo")
    (tmp / "f" / "repo" / "NEW.py").write_text("def only_here():\n    return 1\n")
    git(tmp / "f" / "repo", "add", "-A")
    git(tmp / "f" / "repo", "commit", "-qm", "new tree")
    probe = Runner(lode, tmp / "f", url, "[remote]\nwait_secs = 2\npublish = false\n")
    # With publish off nothing is claimed or waited for: learn the key first.
    key_answer = probe.index(tmp / "f" / "repo", tmp / "f" / "cache-probe")
    # Its first commit is the fixture's tree, already in the cache.
    check(key_answer["remote"]["outcome"] == "ancestor"
          and not key_answer["remote"].get("published"),
          f"a read-only runner starts from the parent's index, publishes nothing ({key_answer['remote']})")
    full_key = key_answer["remote"]["key"]
    plant_claim(url, full_key)
    waiter = Runner(lode, tmp / "f", url, "[remote]\nwait_secs = 2\n")
    start = time.time()
    w = waiter.index(tmp / "f" / "repo", tmp / "f" / "cache-wait")
    took = time.time() - start
    check(w["remote"]["outcome"] == "ancestor" and w["remote"]["waited_ms"] >= 2000,
          f"a stuck claim is waited on for wait_secs, then built here ({w['remote']})")
    check(not w["remote"].get("published"), "and not published over the claim")
    check(took < 30, f"and the wait is bounded ({took:.1f} s)")
    check(any("did not arrive" in n for n in w.get("notes", [])), "the wait is said in a note")

    # A damaged part: refused, built here, the same answers.
    damage_part(url, builder["published"]["shard"])
    clone(origin, tmp / "g")
    g = runner.index(tmp / "g", tmp / "cache-g")
    check(g["remote"]["outcome"] == "built" and "fetched" not in g["remote"],
          f"a damaged shard is refused and the tree built here ({g['remote']})")
    check(any("damaged" in n for n in g.get("notes", [])), "the damage is said in a note")
    check(answers(runner, tmp / "g", tmp / "cache-g") == want, "and the answers are unchanged")
    check(bool(g["remote"].get("published")), "the damaged shard is replaced by the one built here")
    clone(origin, tmp / "i")
    i = runner.index(tmp / "i", tmp / "cache-i")
    check(i["remote"]["outcome"] == "hit", f"which the next runner fetches ({i['remote']['outcome']})")

    # The server gone: two runners racing on one tree each build locally, with one
    # note, exit 0, quickly.
    server.kill()
    server.wait()
    clone(origin, tmp / "h")
    clone(origin, tmp / "h2")
    start = time.time()
    racing = [runner.start_index(tmp / name, tmp / f"cache-{name}") for name in ("h", "h2")]
    down = [finish(p) for p in racing]
    took = time.time() - start
    outcomes = [d["remote"]["outcome"] for d in down]
    check(outcomes == ["local", "local"],
          f"with the server gone both racing runners build here ({outcomes})")
    notes = [[n for n in d.get("notes", []) if "remote cache" in n] for d in down]
    check(all(len(n) == 1 for n in notes), f"each with one note ({notes[0]})")
    check(took < 20, f"within seconds ({took:.1f} s)")
    for name in ("h", "h2"):
        check(answers(runner, tmp / name, tmp / f"cache-{name}") == want,
              f"runner {name} answers as a local build")


if __name__ == "__main__":
    main()
