#!/usr/bin/env python3
"""The shared index service's builders against a 3-node JetStream cluster.

Usage: service-harness.py LODE NATS_SERVER

Starts three nats-server nodes clustered on 127.0.0.1 (free ports, temporary
stores), three `lode serve builder` processes, and enqueues 50 repositories
(git fixtures, one of them large enough to be caught mid-build). The builder
that starts the large one is killed with SIGKILL. Checks, each bounded in
time:

- every repository ends in the catalog exactly once, at its HEAD commit;
- the killed job was delivered again and finished by another builder;
- a job enqueued twice is one job (deduplicated by repo@commit);
- an older commit enqueued later does not replace the newer one;
- every shard in the catalog verifies: a fresh runner fetches it (`hit`),
  parsing nothing;
- three `lode serve shard` nodes load every repository of their partitions
  and answer `search --repo` exactly as a local index, and `--all-repos`
  from every repository, and so does `lode mcp --remote`;
- allow-lists: an identity is answered from the repositories its list
  names only, others invisible; with no lists, from all;
- one nats-server killed as new commits are built and uploaded: queries go
  on (every one complete from 5 s after the kill), the builds are recorded;
  restarted, the next build is recorded too;
- on a nats-server with TLS and the README's permissions, a client is answered
  under its own identity only, cannot change the allow-lists, and cannot
  publish to the cache;
- a shard node that hangs for 2.5 s (SIGSTOP; its connection stays open, so
  its queue group still hands it requests): no answer is partial, the resends
  reach its replica; resumed, every partition is still on two nodes;
- 2,000 queries through `lode mcp --remote`, a shard node killed with SIGKILL
  among them: no answer is partial but the one sent as the node died, and
  within 30 s every partition is on two
  nodes again; a second node killed: the last one takes every partition
  over; all gone: `partial`, every partition missing, within the deadline;
- no source text in any builder's, shard node's or MCP server's log or events.
"""

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPOS = 50
BIG_FILES = 3000
# Seconds after a kill in which answers may still be partial: clients
# reconnecting, a request that was in flight to the dead process.
RECONNECT_WINDOW = 5
DEADLINE = 240


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}", flush=True)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def git(cwd, *args):
    return subprocess.run(
        ["git", "-c", "user.email=h@h", "-c", "user.name=h", *args],
        cwd=cwd, check=True, capture_output=True, text=True, timeout=120,
    ).stdout.strip()


def make_repo(root: Path, i: int, files: int):
    (root / "src").mkdir(parents=True)
    for f in range(files):
        (root / "src" / f"m{f}.py").write_text(
            f"def handler_{i}_{f}(request):\n    return request.get('k{f}')\n\n\n"
            f"def helper_{i}_{f}():\n    return handler_{i}_{f}({{}})\n"
        )
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "src" / "m0.py").write_text(f"def changed_{i}():\n    return {i}\n")
    git(root, "commit", "-qam", "second")
    return git(root, "rev-parse", "HEAD")


class Builder:
    def __init__(self, lode, name, url, work, config):
        self.name = name
        self.lines = []
        # Notes go to a file: a pipe nobody reads fills up and stalls the builder.
        self.log = work.parent / f"{name}.log"
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [lode, "serve", "builder", "--json", "--remote", url, "--work-dir", str(work),
                 "--config", str(config)],
                stdout=subprocess.PIPE, stderr=log, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            try:
                record = json.loads(line)
                if "event" in record:
                    self.lines.append(record)
                else:
                    print(f"{self.name}: {line.strip()[:300]}", flush=True)
            except json.JSONDecodeError:
                pass

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def lode_json(argv, ok=(0,)):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode not in ok:
        fail(f"{' '.join(argv[1:3])} exited {p.returncode}: {p.stderr.strip()[:400]}")
    return json.loads(p.stdout)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    lode, nats_server = os.path.abspath(sys.argv[1]), sys.argv[2]
    tmp = Path(tempfile.mkdtemp(prefix="lode-service-"))
    servers, builders = [], []
    try:
        url = start_cluster(nats_server, tmp, servers)
        repos = scenario(lode, url, tmp, builders)
        shard_nodes(lode, url, tmp, repos, builders, servers)
        pinned_identities(lode, nats_server, tmp, builders, servers)
        no_source_in_logs(tmp, builders)
    finally:
        stop_all(builders, servers, tmp)
    print("service harness: all checks passed")


def no_source_in_logs(tmp, builders):
    """Indexes hold source code; what the builders, shard nodes and MCP servers
    write to their logs and event streams must not."""
    body = "return request.get("  # a line of every fixture, never a query or a name
    logs = sorted(tmp.glob("*.log"))
    leaked = [p.name for p in logs if body in p.read_text(errors="replace")]
    events = [(b.name, b.lines) for b in builders if isinstance(getattr(b, "lines", None), list)]
    leaked += [name for name, lines in events if any(body in json.dumps(r) for r in lines)]
    check(logs and events and not leaked,
          f"no source text in {len(logs)} logs or {len(events)} builders' events ({leaked})")


def stop_all(processes, servers, tmp):
    """Stops the lode processes, then the nats-servers, and removes `tmp`."""
    for p in processes:
        p.stop()
    for s in servers:
        if s.poll() is None:
            s.kill()
        s.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def start_cluster(nats_server, tmp, servers):
    client = free_ports(3)
    routes = free_ports(3)
    route_urls = ",".join(f"nats://127.0.0.1:{p}" for p in routes)
    for i in range(3):
        servers.append(subprocess.Popen(
            [nats_server, "-js", "-n", f"n{i}", "-a", "127.0.0.1", "-p", str(client[i]),
             "--cluster_name", "lode", "--cluster", f"nats://127.0.0.1:{routes[i]}",
             "--routes", route_urls, "-sd", str(tmp / f"js{i}")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return ",".join(f"nats://127.0.0.1:{p}" for p in client)


def wait_for_jetstream(lode, url, config):
    deadline = time.time() + 60
    while True:
        p = subprocess.run([lode, "catalog", "--json", "--remote", url, "--config", str(config)],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 0:
            return
        if time.time() > deadline:
            fail(f"the cluster's JetStream did not come up: {p.stderr.strip()[:300]}")
        time.sleep(0.5)


def scenario(lode, url, tmp, builders):
    config = tmp / "config.toml"
    config.write_text("")
    wait_for_jetstream(lode, url, config)
    init = [lode, "cluster", "init", "--json", "--remote", url, "--config", str(config)]
    held = lode_json(init)["held"]
    names = {"lode-cache", "lode-claims", "lode-shards", "lode-repos", "lode-nodes",
             "lode-access", "LODE_JOBS"}
    check({h["name"] for h in held} == names and all(h["replicas"] in (1, 3) for h in held),
          f"cluster init makes every bucket and stream ({[(h['name'], h['replicas']) for h in held]})")
    check(lode_json(init)["held"] == held, "and a second init changes nothing")
    repos = {}
    for i in range(REPOS):
        root = tmp / "repos" / f"r{i:02}"
        repos[str(root)] = make_repo(root, i, BIG_FILES if i == 7 else 4)
    big = str(tmp / "repos" / "r07")
    for n in range(3):
        builders.append(Builder(lode, f"b{n}", url, tmp / f"work{n}", config))
    # Watch from the start: the large job may be taken while the others are still queued.
    killed = {}

    def kill_the_large_ones_builder():
        deadline = time.time() + DEADLINE
        while time.time() < deadline:
            for b in builders:
                if any(l["event"] == "start" and l["repo"] == big for l in b.lines):
                    time.sleep(0.2)
                    killed["midway"] = not any(
                        l["event"] == "done" and l["repo"] == big for l in b.lines)
                    b.proc.send_signal(signal.SIGKILL)
                    b.proc.wait()
                    killed["builder"] = b
                    return
            time.sleep(0.02)

    watcher = threading.Thread(target=kill_the_large_ones_builder, daemon=True)
    watcher.start()
    for root in repos:
        q = lode_json([lode, "enqueue", root, "--json", "--remote", url, "--config", str(config)])
        check_dup = q["duplicate"]
        if check_dup:
            fail(f"{root}: a first enqueue was taken for a duplicate")
    again = lode_json([lode, "enqueue", str(tmp / "repos" / "r00"), "--json", "--remote", url,
                       "--config", str(config)])
    check(again["duplicate"], "a job enqueued twice is one job")

    # The builder that started the large repository is killed, mid-build.
    deadline = time.time() + DEADLINE
    watcher.join(DEADLINE)
    if "builder" not in killed:
        fail("no builder started the large repository")
    check(killed["midway"], "the large repository's builder was killed mid-build")
    print(f"killed builder {killed['builder'].name} mid-build", flush=True)

    # Everything ends in the catalog.
    while True:
        entries = lode_json([lode, "catalog", "--json", "--remote", url, "--config",
                             str(config)])["repositories"]
        if len(entries) >= REPOS and all(e["commit"] == repos.get(e["repo"]) for e in entries):
            break
        if time.time() > deadline:
            odd = [l for b in builders for l in b.lines if l["event"] not in ("start", "done")]
            fail(f"{len(entries)} of {REPOS} repositories in the catalog after {DEADLINE} s: "
                 f"{odd[:3]}")
        time.sleep(1)
    names = [e["repo"] for e in entries]
    check(len(names) == REPOS and set(names) == set(repos),
          "every repository is in the catalog exactly once")
    check(all(e["commit"] == repos[e["repo"]] for e in entries), "each at its HEAD commit")
    done = [l for b in builders for l in b.lines if l["event"] == "done"]
    redelivered = [l for l in done if l["repo"] == big and l["delivered"] >= 2]
    check(bool(redelivered), f"the killed job was delivered again and finished "
          f"({[(l['repo'][-3:], l['delivered']) for l in done if l['repo'] == big]})")

    # An older commit, enqueued after the newer one was built, changes nothing.
    older = git(Path(big), "rev-parse", "HEAD~1")
    lode_json([lode, "enqueue", big, "--commit", older, "--json", "--remote", url,
               "--config", str(config)])
    while not any(l["event"] == "done" and l["commit"] == older
                  for b in builders for l in b.lines):
        if time.time() > deadline:
            fail("the older commit's job did not finish")
        time.sleep(0.5)
    line = next(l for b in builders for l in b.lines
                if l["event"] == "done" and l["commit"] == older)
    check(line.get("recorded") == "older", f"an older commit is built but not recorded ({line})")
    entry = next(e for e in lode_json([lode, "catalog", "--json", "--remote", url, "--config",
                                       str(config)])["repositories"] if e["repo"] == big)
    check(entry["commit"] == repos[big], "the catalog keeps the newer commit")

    # Every shard verifies: a fresh runner's clone fetches it and parses nothing.
    bad = []
    for e in entries:
        clone = tmp / "verify" / Path(e["repo"]).name
        git(tmp, "clone", "-q", e["repo"], str(clone))
        got = lode_json([lode, "index", "--json", "--root", str(clone), "--cache-dir",
                         str(tmp / "verify-cache"), "--remote", url, "--config", str(config)])
        if got["remote"]["outcome"] != "hit" or got["parsed"] != 0 \
                or got["remote"]["fetched"]["shard"] != e["shard"]:
            bad.append((e["repo"], got["remote"]))
    check(not bad, f"every shard in the catalog verifies and installs ({bad[:2]})")
    return repos


class Node:
    def __init__(self, lode, name, url, work, config):
        self.name = name
        self.proc = subprocess.Popen(
            [lode, "serve", "shard", "--remote", url, "--name", name, "--work-dir", str(work),
             "--config", str(config)],
            stdout=subprocess.DEVNULL, stderr=open(work.parent / f"{name}.log", "w"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Mcp:
    """`lode mcp --remote`, spoken to over stdio as an MCP client would."""

    def __init__(self, lode, url, config, log):
        self.proc = subprocess.Popen(
            [lode, "mcp", "--remote", url, "--config", str(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "w"), text=True)
        self._start()

    def _start(self):
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "harness", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            try:
                line = self.lines.get(timeout=30)
            except queue.Empty:
                fail(f"lode mcp --remote: no answer to {method} within 30 s")
            if line is None:
                fail(f"lode mcp --remote closed its output (exit {self.proc.wait()})")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail(f"lode mcp --remote: {method}: {message['error']}")
                return message["result"]

    def call(self, tool, **arguments):
        """A tool's JSON answer (`structuredContent`)."""
        r = self.request("tools/call", {"name": tool, "arguments": arguments})
        if r.get("isError"):
            fail(f"lode mcp --remote: {tool} failed: {r['content'][0]['text'][:300]}")
        return r["structuredContent"]

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ask(lode, url, config, *args):
    p = subprocess.run([lode, *args, "--json", "--remote", url, "--config", str(config)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode not in (0, 1):
        fail(f"{' '.join(args[:2])} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return json.loads(p.stdout)


def local(lode, tmp, config, root, *args):
    """A command's JSON answer from a local index of the checkout at `root`."""
    p = subprocess.run([lode, *args, "--json", "--root", root, "--cache-dir",
                        str(tmp / "local-cache"), "--config", str(config)],
                       capture_output=True, text=True, timeout=120)
    return json.loads(p.stdout)


def complete(answer, repos):
    served = {s["repo"]: s["commit"] for s in answer["served"]}
    return (not answer["partial"] and not answer["loading"]
            and served == repos)


def wait_complete(lode, url, config, repos, within, what):
    deadline = time.time() + within
    while True:
        a = ask(lode, url, config, "search", "handler request", "--all-repos", "-k", "200")
        if complete(a, repos):
            return a
        if time.time() > deadline:
            fail(f"{what}: not complete after {within} s (partial {a['partial']}, "
                 f"missing {a['missing_partitions']}, loading {len(a['loading'])}, "
                 f"served {len(a['served'])})")
        time.sleep(1)


def shard_nodes(lode, url, tmp, repos, builders, servers):
    config = tmp / "config.toml"
    nodes = [Node(lode, f"node-{n}", url, tmp / f"node{n}", config) for n in range(3)]
    builders.extend(nodes)
    start = time.time()
    a = wait_complete(lode, url, config, repos, 180, "three shard nodes")
    check(True, f"three shard nodes serve all {len(repos)} repositories ({time.time() - start:.0f} s)")
    check(len({h["repo"] for h in a["hits"]}) > 20, "an --all-repos search merges many repositories")

    # One repository, asked of the service, answers as a local index of its checkout.
    r3 = str(tmp / "repos" / "r03")
    remote = ask(lode, url, config, "search", "changed_3", "--repo", r3)
    check(remote["hits"] and all(h["repo"] == r3 for h in remote["hits"]),
          "search --repo answers from that repository only")
    check(remote["hits"][0]["path"] == "src/m0.py" and remote["served"][0]["commit"] == repos[r3],
          "its best hit is the symbol's file, at the catalog's commit")
    want = [(h["path"], h["start_line"], h["end_line"], round(h["score"], 6))
            for h in local(lode, tmp, config, r3, "search", "changed_3")["hits"]]
    got = [(h["path"], h["start_line"], h["end_line"], round(h["score"], 6))
           for h in remote["hits"]]
    check(got == want, "and exactly as a local index of the same commit")
    want_search = want
    g = ask(lode, url, config, "grep", r"def changed_3\(", "--all-repos")
    check(g["hits"] and {h["repo"] for h in g["hits"]} == {r3},
          "grep --all-repos finds the one repository that defines it")
    o = ask(lode, url, config, "outline", "src/m0.py", "--repo", r3)
    want = local(lode, tmp, config, r3, "outline", "src/m0.py")
    check([x["repo"] for x in o["answers"]] == [r3]
          and o["answers"][0]["answer"]["symbols"] == want["symbols"],
          "outline --repo answers as a local index of the same commit")
    d = ask(lode, url, config, "outline", "src", "--repo", r3)
    check(any(f["path"] == "src/m0.py" for f in d["answers"][0]["answer"]["files"]),
          "outline of a directory --repo lists its files")
    c = ask(lode, url, config, "callers", "handler_3_1", "--repo", r3)
    want = local(lode, tmp, config, r3, "callers", "handler_3_1")
    got = c["answers"][0]["answer"] if c["answers"] else {}
    check(got.get("children") and got["children"] == want["children"],
          "callers --repo answers as a local index of the same commit")
    want_callers = want
    s = ask(lode, url, config, "show", "helper_3_1", "--repo", r3)
    got = s["answers"][0]["answer"] if s["answers"] else {}
    check("handler_3_1" in "".join(got.get("lines", [])) and "helper_3_1" in got.get("text", ""),
          "show --repo gives the symbol's body")
    refused = subprocess.run([lode, "show", "helper_3_1", "--callgraph", "--repo", r3, "--remote",
                              url, "--config", str(config)],
                             capture_output=True, text=True, timeout=60)
    check(refused.returncode == 2 and "--callgraph" in refused.stderr,
          "show --callgraph with --repo: refused in one line, exit 2")
    missing = subprocess.run([lode, "outline", "no/such.py", "--json", "--repo", r3, "--remote",
                              url, "--config", str(config)],
                             capture_output=True, text=True, timeout=60)
    check(missing.returncode == 1 and "not_found" in missing.stdout,
          "outline of a path the repository lacks: not_found, exit 1")

    # The same through `lode mcp --remote`, the agents' front.
    mcp = Mcp(lode, url, config, tmp / "mcp.log")
    builders.append(mcp)
    names = [t["name"] for t in mcp.request("tools/list", {})["tools"]]
    check(names == ["search", "grep", "outline", "callers", "show"],
          f"lode mcp --remote lists the service's tools ({names})")
    ms = mcp.call("search", query="changed_3", repo=r3)
    got = [(h["path"], h["start_line"], h["end_line"], round(h["score"], 6)) for h in ms["hits"]]
    check(got == want_search and ms["served"] == [{"repo": r3, "commit": repos[r3]}],
          "its search with repo answers as a local index of the same commit")
    mc = mcp.call("callers", symbol="handler_3_1", repo=r3)
    check(mc["answers"] and mc["answers"][0]["answer"]["children"] == want_callers["children"],
          "and so do its callers")
    ma = mcp.call("search", query="handler request", top_k=10)
    cli = ask(lode, url, config, "search", "handler request", "--all-repos", "-k", "10")
    place = lambda a: [(h["repo"], h["path"], h["start_line"], round(h["score"], 6))
                       for h in a["hits"]]
    check(not ma["partial"] and len(ma["served"]) == len(repos) and len(ma["hits"]) == 10
          and place(ma) == place(cli),
          f"its search without repo merges all {len(ma['served'])} repositories as the CLI does "
          f"(partial {ma['partial']}, {len(ma['hits'])} hits)")

    # A new commit of one repository while it is asked: each answer is wholly one commit.
    r5 = tmp / "repos" / "r05"
    old = repos[str(r5)]
    (r5 / "src" / "m0.py").write_text("def renamed_5():\n    return 5\n")
    git(r5, "commit", "-qam", "rename")
    new = git(r5, "rev-parse", "HEAD")
    lode_json([lode, "enqueue", str(r5), "--json", "--remote", url, "--config", str(config)])
    answers = {old: 0, new: 0, None: 0}
    deadline = time.time() + 60
    while True:
        a = ask(lode, url, config, "search", "changed_5 renamed_5", "--repo", str(r5))
        commit = a["served"][0]["commit"] if a["served"] else None
        m0 = " ".join(h["snippet"] for h in a["hits"] if h["path"] == "src/m0.py")
        if commit is None and (a["partial"] or a["loading"]) and not a["hits"]:
            # No answer this time (a busy machine), and flagged so: not mixed.
            ok = True
        elif commit == old:
            ok = "changed_5" in m0 and "renamed_5" not in m0
        elif commit == new:
            ok = "renamed_5" in m0 and "changed_5" not in m0
        else:
            ok = False
        if not ok:
            fail(f"an answer mixing commits or from neither ({commit}): {m0[:200]!r}")
        answers[commit] += 1
        if commit == new:
            break
        if time.time() > deadline:
            logs = [(tmp / f"node-{n}.log").read_text()[-400:] for n in range(3)]
            built = [l for b in builders if hasattr(b, "lines") for l in b.lines
                     if l["commit"] != "HEAD"][-2:]
            fail(f"the new commit was not served within 120 s: {logs} {built}")
        time.sleep(0.1)
    check(True, f"during a re-index every answer is wholly one commit "
          f"({answers[old]} old, {answers[None]} partial with none, then the new)")
    repos[str(r5)] = new

    allow_lists(lode, url, tmp, repos)

    # A NATS node killed while new commits are built and uploaded.
    nats_node_killed(lode, url, tmp, repos, servers, mcp, builders)
    wait_complete(lode, url, config, repos, 120, "after the NATS node came back")

    # A node that hangs: the resends of its requests reach its replicas.
    hung_node(mcp, repos, nodes, tmp)
    wait_complete(lode, url, config, repos, 90, "the hung node resumed")

    # A node killed under load: its partitions' replicas answer every query.
    under_load(mcp, repos, nodes, tmp)
    wait_complete(lode, url, config, repos, 90, "one node killed")
    check(True, "one node killed: all repositories still served")
    nodes[1].stop()
    start = time.time()
    wait_complete(lode, url, config, repos, 180, "two nodes killed")
    check(True, f"two nodes killed: the last one took every partition over ({time.time() - start:.0f} s)")
    nodes[2].stop()
    start = time.time()
    a = ask(lode, url, config, "search", "handler request", "--all-repos")
    took = time.time() - start
    check(a["partial"] and len(a["missing_partitions"]) == 8,
          f"no node left: partial, every partition missing ({a['missing_partitions']})")
    check(took < 10, f"within the deadline ({took:.1f} s)")


def allow_lists(lode, url, tmp, repos):
    """An identity whose allow-list names a prefix is answered from those
    repositories only; with the lists removed, from all again."""
    config = tmp / "config.toml"
    team = tmp / "team-a.toml"
    team.write_text('[remote]\nidentity = "team-a"\n')
    allow = [lode, "cluster", "allow", "--json", "--remote", url, "--config", str(config)]
    prefix = str(tmp / "repos" / "r0")
    lode_json(allow + ["team-a", f"{prefix}*"])
    listed = lode_json(allow + ["anonymous", "*"])["allowed"]
    check(listed == {"team-a": {"repos": [f"{prefix}*"]}, "anonymous": {"repos": ["*"]}},
          "cluster allow sets an identity's list and lists them all")
    mine = {r for r in repos if r.startswith(prefix)}

    def served(config, *args):
        a = ask(lode, url, config, "search", "handler request", *args)
        return a, {s["repo"] for s in a["served"]}

    deadline = time.time() + 15
    while True:
        a, seen = served(team, "--all-repos", "-k", "200")
        if seen == mine and not a["partial"]:
            break
        if time.time() > deadline:
            fail(f"team-a is served {len(seen)} repositories, not its {len(mine)}")
        time.sleep(0.5)
    check(all(h["repo"] in mine for h in a["hits"]),
          f"an identity is answered from the {len(mine)} repositories its list allows only")
    other = str(tmp / "repos" / "r20")
    a, seen = served(team, "--repo", other)
    check(not seen and not a["hits"] and not a["loading"],
          "a repository outside its list is invisible to it, not even loading")
    a, seen = served(config, "--all-repos", "-k", "200")
    check(seen == set(repos), "an identity allowed `*` is answered from every repository")
    lode_json(allow + ["team-a", "--remove"])
    lode_json(allow + ["anonymous", "--remove"])
    deadline = time.time() + 15
    while served(team, "--all-repos", "-k", "200")[1] != set(repos):
        if time.time() > deadline:
            fail("with no allow-lists left, team-a is not served every repository")
        time.sleep(0.5)
    check(True, "with no allow-lists, every identity is answered from every repository")


NATS_AUTH = """
jetstream { store_dir: "%(store)s" }
tls { cert_file: "%(cert)s", key_file: "%(key)s" }
authorization { users = [
  { user: admin, password: "admin-pw" },
  { user: team-a, password: "team-a-pw",
    permissions: { publish: { allow: ["lode.q.*.team-a", "$JS.API.>", "$KV.lode-claims.>"],
                              deny: ["$KV.lode-access.>", "$KV.lode-cache.>", "$KV.lode-repos.>",
                                     "$O.lode-shards.>", "$JS.API.STREAM.DELETE.>",
                                     "$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.UPDATE.>",
                                     "$JS.API.STREAM.MSG.DELETE.>"] },
                   subscribe: ["_INBOX.>"] } }
] }
"""


def certificates(tmp):
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl)."""
    d = tmp / "tls"
    d.mkdir()
    run = lambda *args: subprocess.run(["openssl", *args], cwd=d, check=True,
                                       capture_output=True, timeout=60)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "1", "-subj", "/CN=lode harness CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=127.0.0.1")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "san.ext")
    return d / "ca.pem", d / "server.pem", d / "server.key"


def pinned_identities(lode, nats_server, tmp, builders, servers):
    """On a nats-server with TLS and the README's permissions for team-a:
    team-a is answered under its own identity, a query naming another
    identity goes unanswered (partial), team-a cannot change the allow-lists
    and cannot publish an index."""
    ca, cert, key = certificates(tmp)
    conf = tmp / "auth.conf"
    conf.write_text(NATS_AUTH % {"store": tmp / "js-auth", "cert": cert, "key": key})
    port = free_ports(1)[0]
    servers.append(subprocess.Popen(
        [nats_server, "-c", str(conf), "-a", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    url = f"tls://127.0.0.1:{port}"
    untrusted = tmp / "auth-untrusted.toml"
    untrusted.write_text('[remote]\nuser = "admin"\npassword_env = "LODE_ADMIN_PW"\n')
    os.environ.update(LODE_ADMIN_PW="admin-pw", LODE_TEAM_PW="team-a-pw")
    configs = {}
    for name, user, identity in (("admin", "admin", None), ("team-a", "team-a", None),
                                 ("forger", "team-a", "team-b")):
        configs[name] = tmp / f"auth-{name}.toml"
        configs[name].write_text(
            f'[remote]\nuser = "{user}"\npassword_env = '
            f'"{"LODE_ADMIN_PW" if user == "admin" else "LODE_TEAM_PW"}"\n'
            f'tls_ca_file = "{ca}"\n'
            + (f'identity = "{identity}"\n' if identity else ""))
    admin = configs["admin"]
    wait_for_jetstream(lode, url, admin)
    p = subprocess.run([lode, "catalog", "--remote", url, "--config", str(untrusted)],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1,
          f"a client that does not trust the server's certificate is refused in one line "
          f"({p.stderr.strip()[:120]})")
    lode_json([lode, "cluster", "init", "--json", "--remote", url, "--config", str(admin)])
    root = tmp / "repos" / "r01"
    lode_json([lode, "enqueue", str(root), "--json", "--remote", url, "--config", str(admin)])
    builders.append(Builder(lode, "auth-builder", url, tmp / "auth-work", admin))
    builders.append(Node(lode, "auth-node", url, tmp / "auth-node", admin))
    lode_json([lode, "cluster", "allow", "team-a", str(root), "--json", "--remote", url,
               "--config", str(admin)])
    deadline = time.time() + 120
    while True:
        a = ask(lode, url, configs["team-a"], "search", "handler request", "--all-repos")
        if a["served"] == [{"repo": str(root), "commit": git(root, "rev-parse", "HEAD")}] \
                and not a["partial"]:
            break
        if time.time() > deadline:
            fail(f"team-a was not served its repository on the authorised server: {a}")
        time.sleep(0.5)
    check(True, "on a server with permissions, team-a is answered under its own identity")
    forged = ask(lode, url, configs["forger"], "search", "handler request", "--all-repos")
    check(forged["partial"] and not forged["served"] and len(forged["missing_partitions"]) == 8,
          "a query naming another identity is refused by the server: no answer, every "
          "partition missing")
    p = subprocess.run([lode, "cluster", "allow", "team-a", "*", "--remote", url,
                        "--config", str(configs["team-a"])],
                       capture_output=True, text=True, timeout=60)
    listed = lode_json([lode, "cluster", "access", "--json", "--remote", url,
                        "--config", str(admin)])["allowed"]
    check(p.returncode != 0 and listed == {"team-a": {"repos": [str(root)]}},
          f"and team-a cannot widen its own allow-list (exit {p.returncode})")

    # A runner of team-a builds a new commit and tries to publish it: refused.
    runner = tmp / "auth-runner"
    git(tmp, "clone", "-q", str(root), str(runner))
    (runner / "src" / "new.py").write_text("def new_in_runner():\n    return 1\n")
    git(runner, "add", "-A")
    git(runner, "commit", "-qm", "runner")
    start = time.time()
    got = lode_json([lode, "index", "--json", "--root", str(runner), "--cache-dir",
                     str(tmp / "auth-runner-cache"), "--remote", url,
                     "--config", str(configs["team-a"])])
    took = time.time() - start
    check(not got["remote"].get("published") and got["remote"]["outcome"] != "hit",
          f"a runner without write permissions builds ({got['remote']['outcome']}) and "
          f"publishes nothing ({took:.0f} s; notes {got.get('notes', [])[:1]})")
    again = tmp / "auth-admin"
    git(tmp, "clone", "-q", str(runner), str(again))
    got = lode_json([lode, "index", "--json", "--root", str(again), "--cache-dir",
                     str(tmp / "auth-admin-cache"), "--remote", url, "--config", str(admin)])
    check(got["remote"]["outcome"] != "hit",
          f"and nothing of its build is in the cache ({got['remote']['outcome']})")


def catalog_commits(lode, url, config):
    p = subprocess.run([lode, "catalog", "--json", "--remote", url, "--config", str(config)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return {}
    return {e["repo"]: e["commit"] for e in json.loads(p.stdout)["repositories"]}


def commit_and_enqueue(lode, url, config, root, name):
    (root / "src" / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", name)
    lode_json([lode, "enqueue", str(root), "--json", "--remote", url, "--config", str(config)])
    return git(root, "rev-parse", "HEAD")


def nats_node_killed(lode, url, tmp, repos, servers, mcp, builders):
    """One of the three nats-server nodes killed with SIGKILL as six new commits
    are enqueued: queries through `lode mcp --remote` go on, the six builds
    finish and are recorded; the node restarted, a seventh build is recorded
    too."""
    config = tmp / "config.toml"
    names = sorted(repos)
    new = {}
    for i in range(10, 16):
        root = tmp / "repos" / f"r{i:02}"
        new[str(root)] = commit_and_enqueue(lode, url, config, root, f"during_outage_{i}")
    servers[1].kill()
    servers[1].wait()
    killed_at = time.time()
    # (seconds since the kill, complete) of each query, for at least 10 s.
    answered = []
    while True:
        for _ in range(20):
            repo = names[len(answered) % len(names)]
            a = mcp.call("search", query="handler request", repo=repo, top_k=3)
            answered.append((time.time() - killed_at,
                             not a["partial"] and len(a["served"]) == 1))
        recorded = catalog_commits(lode, url, config)
        if all(recorded.get(r) == c for r, c in new.items()) and answered[-1][0] > 10:
            break
        if time.time() - killed_at > 180:
            missing = {r for r, c in new.items() if recorded.get(r) != c}
            for b in (b for b in builders if isinstance(b, Builder)):
                events = [e for e in b.lines if e.get("repo") in missing]
                print(f"{b.name}: {events[-4:]} {b.log.read_text()[-600:]}", flush=True)
            fail(f"builds did not finish with a NATS node down: {6 - len(missing)} of 6 recorded")
    took = time.time() - killed_at
    settling = [ok for t, ok in answered if t < RECONNECT_WINDOW]
    settled = [ok for t, ok in answered if t >= RECONNECT_WINDOW]
    check(settled and all(settled),
          f"a NATS node killed during uploads: every query {RECONNECT_WINDOW} s on complete "
          f"({sum(settled)} of {len(settled)}); in the first {RECONNECT_WINDOW} s, while "
          f"clients reconnect, {sum(settling)} of {len(settling)}")
    check(True, f"and the six builds finished and were recorded ({took:.0f} s)")
    servers[1] = subprocess.Popen(servers[1].args, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
    root = tmp / "repos" / "r16"
    new[str(root)] = commit_and_enqueue(lode, url, config, root, "after_restart")
    deadline = time.time() + 120
    while catalog_commits(lode, url, config).get(str(root)) != new[str(root)]:
        if time.time() > deadline:
            fail("the NATS node restarted: a build enqueued after it was not recorded in 120 s")
        time.sleep(0.5)
    check(True, "the NATS node restarted: a build enqueued after it is recorded")
    repos.update(new)


def serving(log):
    """The partitions a node last said it serves."""
    lines = [l for l in log.read_text().splitlines() if "serving partitions" in l]
    return set(json.loads(lines[-1].split("serving partitions ", 1)[1])) if lines else set()


def hung_node(mcp, repos, nodes, tmp, hang=2.5):
    """Repository-scoped searches for `hang` seconds while one shard node is
    stopped (SIGSTOP): the node stays connected and in its partitions' queue
    groups, so a first request may reach it and go unanswered; the resends
    go to every replica, and no answer may be partial. The stop is shorter
    than a heartbeat's lifetime, so the members do not change; resumed
    (SIGCONT), every partition is still on two nodes."""
    names = sorted(repos)
    victim = nodes[1]
    bad, slow, i = [], 0, 0
    victim.proc.send_signal(signal.SIGSTOP)
    stopped = time.time()
    try:
        while time.time() - stopped < hang:
            repo = names[i % len(names)]
            i += 1
            asked = time.time()
            a = mcp.call("search", query="handler request", repo=repo, top_k=3)
            took = time.time() - asked
            slow += took > 0.4
            if a["partial"] or [s["repo"] for s in a["served"]] != [repo]:
                bad.append((i, Path(repo).name, a["missing_partitions"], f"{took:.1f} s"))
    finally:
        victim.proc.send_signal(signal.SIGCONT)
    check(not bad, f"a hung node: {i} queries in {hang} s, none partial ({len(bad)} were: "
          f"{bad[:3]}; {slow} answered by a resend)")
    # Settled: every partition on two nodes, and no node's partitions changed
    # for a heartbeat's lifetime (had the stop outlived it, they would move).
    resumed, last, since = time.time(), None, time.time()
    while True:
        now = [sorted(serving(tmp / f"{n.name}.log")) for n in nodes]
        if now != last:
            last, since = now, time.time()
        held = [p for ps in now for p in ps]
        if all(held.count(p) >= 2 for p in range(8)) and time.time() - since >= 7:
            break
        if time.time() - resumed > 60:
            fail(f"partitions not settled on two nodes within 60 s of resuming: {now}")
        time.sleep(0.5)
    check(True, f"resumed, every partition on two nodes ({time.time() - resumed:.0f} s)")
    shares = [len(ps) for ps in now]
    check(max(shares) - min(shares) <= 1, f"the nodes' shares differ by one at most ({shares})")


def under_load(mcp, repos, nodes, tmp, queries=2000, kill_at=200):
    """`queries` repository-scoped searches through `lode mcp --remote`, one
    shard node killed with SIGKILL after `kill_at` of them: none is partial
    and every one is served from its repository (the coordinator resends to
    every replica), and the two nodes left serve every partition again (each
    is on two nodes) within 30 s."""
    names = sorted(repos)
    bad, killed_at, start = [], None, time.time()
    for i in range(queries):
        if i == kill_at:
            nodes[0].stop()
            killed_at = time.time()
        repo = names[i % len(names)]
        asked = time.time()
        a = mcp.call("search", query="handler request", repo=repo, top_k=3)
        # The commit may be the one before while a replica still loads the new
        # one; that every answer is wholly one commit is checked above.
        if a["partial"] or [s["repo"] for s in a["served"]] != [repo]:
            bad.append((i, Path(repo).name, a["partial"], a["missing_partitions"],
                        a["loading"][:1], f"{time.time() - asked:.1f} s",
                        killed_at and asked - killed_at))
    took = time.time() - start
    if bad:
        for n in nodes:
            print(f"{n.name}: {(tmp / f'{n.name}.log').read_text()[-600:]}", flush=True)
    check(not bad, f"{queries} queries, a node killed after {kill_at}: none partial or "
          f"incomplete ({len(bad)} were: {bad[:3]}; {queries / took:.0f} queries/s)")
    everything = set(range(8))
    while True:
        if all(serving(tmp / f"{n.name}.log") == everything for n in nodes[1:]):
            break
        if time.time() - killed_at > 30:
            fail(f"partitions not re-replicated within 30 s of the kill: "
                 f"{[sorted(serving(tmp / f'{n.name}.log')) for n in nodes[1:]]}")
        time.sleep(0.5)
    check(True, f"every partition on two nodes again {time.time() - killed_at:.0f} s "
          f"after the kill")


if __name__ == "__main__":
    main()
