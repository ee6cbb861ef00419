#!/usr/bin/env python3
"""The shared index service, measured: build throughput and org-wide search.

Usage: service-bench.py LODE NATS_SERVER [--repos N] [--files F] [--source DIR]
                        [--queries Q]

Starts a 3-node JetStream cluster on 127.0.0.1 (the harness's), makes N git
repositories of F files each (slices of the source files under DIR when given,
else generated Python), and reports:

- build throughput with 1, 2 and 3 `lode serve builder` processes: a batch of
  repositories enqueued, the builders started, the time until the catalog
  records every one (each builder count builds its own batch of equal size);
- org-wide search through the coordinator: Q calls of `search` without `repo`
  through one `lode mcp --remote` (three shard nodes holding the N
  repositories), beside Q repository-scoped calls through it, and Q calls of a
  local `lode mcp --root` on one of the repositories; p50 and p95 of each
  call's wall time as the MCP client sees it.

Prints a Markdown table. Figures are for the machine it runs on: builders,
shard nodes and nats-servers share its cores.
"""

import argparse
import importlib.util
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("harness", HERE / "service-harness.py")
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)

QUERIES = ["handler request", "parse the config file", "retry with backoff", "error message",
           "read lines from a stream", "default value", "close the connection",
           "format a date", "cache lookup", "command line arguments"]


def make_repos(tmp, n, files, source):
    """N repositories of `files` files: consecutive slices of `source`'s files
    (wrapping around), or generated ones."""
    pool = []
    if source:
        pool = sorted(p for p in Path(source).rglob("*")
                      if p.is_file() and p.suffix in {".py", ".js", ".ts", ".go", ".rs", ".java"}
                      and p.stat().st_size < 200_000)
    repos = {}
    for i in range(n):
        root = tmp / "repos" / f"r{i:03}"
        if not pool:
            repos[str(root)] = harness.make_repo(root, i, files)
            continue
        (root / "src").mkdir(parents=True)
        for f in range(files):
            src = pool[(i * files + f) % len(pool)]
            (root / "src" / f"{f:03}_{src.name}").write_bytes(src.read_bytes())
        harness.git(root, "init", "-q")
        harness.git(root, "add", "-A")
        harness.git(root, "commit", "-qm", "first")
        repos[str(root)] = harness.git(root, "rev-parse", "HEAD")
    return repos


def build_batch(lode, url, tmp, config, batch, builders):
    """Seconds from starting `builders` builders to the catalog naming every
    repository of `batch` (enqueued before they start)."""
    for root in batch:
        harness.lode_json([lode, "enqueue", root, "--json", "--remote", url,
                           "--config", str(config)])
    start = time.time()
    procs = [harness.Builder(lode, f"t{builders}-{k}", url, tmp / f"work-{builders}-{k}", config)
             for k in range(builders)]
    try:
        while True:
            recorded = harness.catalog_commits(lode, url, config)
            if all(recorded.get(r) == c for r, c in batch.items()):
                return time.time() - start
            if time.time() - start > 1800:
                harness.fail(f"{builders} builders: the batch was not built in 30 min")
            time.sleep(0.25)
    finally:
        for p in procs:
            p.stop()


def timed_calls(mcp, calls):
    took = []
    for tool, args in calls:
        start = time.perf_counter()
        mcp.call(tool, **args)
        took.append((time.perf_counter() - start) * 1000)
    return took


def percentiles(ms):
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lode")
    ap.add_argument("nats_server")
    ap.add_argument("--repos", type=int, default=210)
    ap.add_argument("--files", type=int, default=40)
    ap.add_argument("--source")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    lode = str(Path(a.lode).resolve())
    tmp = Path(tempfile.mkdtemp(prefix="lode-service-bench-"))
    servers, running = [], []
    try:
        url = harness.start_cluster(a.nats_server, tmp, servers)
        config = tmp / "config.toml"
        config.write_text("")
        harness.wait_for_jetstream(lode, url, config)
        harness.lode_json([lode, "cluster", "init", "--json", "--remote", url,
                           "--config", str(config)])
        repos = make_repos(tmp, a.repos, a.files, a.source)
        names = sorted(repos)
        per = a.repos // 6
        rows = []
        for k, batch in ((1, names[:per]), (2, names[per:2 * per]), (3, names[2 * per:3 * per])):
            secs = build_batch(lode, url, tmp, config, {r: repos[r] for r in batch}, k)
            rows.append((k, len(batch), secs))
            print(f"{k} builders: {len(batch)} repositories in {secs:.1f} s", flush=True)
        rest = {r: repos[r] for r in names[3 * per:]}
        build_batch(lode, url, tmp, config, rest, 3)

        nodes = [harness.Node(lode, f"node-{n}", url, tmp / f"node{n}", config) for n in range(3)]
        running.extend(nodes)
        harness.wait_complete(lode, url, config, repos, 1800, "three shard nodes")
        remote = harness.Mcp(lode, url, config, tmp / "mcp.log")
        running.append(remote)
        local_mcp = LocalMcp(lode, names[0], tmp, config)
        running.append(local_mcp)
        queries = [QUERIES[i % len(QUERIES)] for i in range(a.queries)]
        # One warm-up round each: the shard nodes' and the local index's first query.
        for mcp, extra in ((remote, {}), (local_mcp, {})):
            timed_calls(mcp, [("search", {"query": q, **extra}) for q in QUERIES])
        org = timed_calls(remote, [("search", {"query": q, "top_k": 10}) for q in queries])
        scoped = timed_calls(remote, [("search", {"query": q, "top_k": 10,
                                                  "repo": names[i % len(names)]})
                                      for i, q in enumerate(queries)])
        local = timed_calls(local_mcp, [("search", {"query": q, "top_k": 10}) for q in queries])
        print()
        print("| builders | repositories | seconds | repositories / s |")
        print("|---:|---:|---:|---:|")
        for k, n, secs in rows:
            print(f"| {k} | {n} | {secs:.1f} | {n / secs:.2f} |")
        print()
        print(f"| `search` ({a.queries} calls, MCP client's wall time) | p50 ms | p95 ms |")
        print("|---|---:|---:|")
        for what, ms in ((f"`lode mcp --remote`, every repository ({len(repos)})", org),
                         ("`lode mcp --remote`, `repo` given", scoped),
                         ("`lode mcp --root` on one repository (local)", local)):
            p50, p95 = percentiles(ms)
            print(f"| {what} | {p50:.1f} | {p95:.1f} |")
    finally:
        harness.stop_all(running, servers, tmp)


class LocalMcp(harness.Mcp):
    """`lode mcp --root ROOT`, the single-machine server, as the baseline."""

    def __init__(self, lode, root, tmp, config):
        self.proc = subprocess.Popen(
            [lode, "mcp", "--root", root, "--cache-dir", str(tmp / "local-cache"),
             "--config", str(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(tmp / "local-mcp.log", "w"), text=True)
        self._start()


if __name__ == "__main__":
    main()
