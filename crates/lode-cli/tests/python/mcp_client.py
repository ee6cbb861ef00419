"""`lode mcp` driven by an independent client: the Python MCP SDK (PyPI `mcp`).

Usage: python mcp_client.py [PATH_TO_LODE [CHECK...]]   (default: target/debug/lode, every check)

Run by .ci/run after `cargo test`, in a venv with `mcp` installed. Each check
starts from a copy of tests/fixtures/shop with its own cache; the closing line
is "N passed, M failed" and the exit status is 1 when anything failed. A
failed check closes its session and server before the next starts; a check
that takes over CHECK_TIMEOUT_S counts as failed and is abandoned, so a run
always ends.
"""

import asyncio
import json
import os
import shutil
import sys
import tempfile
import traceback
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "shop"
# Not resolved: an installed entry point may be a link, and the link is what is checked.
LODE = Path(sys.argv[1] if len(sys.argv) > 1 else "target/debug/lode").absolute()
ONLY = sys.argv[2:]


class Server:
    """A fixture copy, a cache, and a session with `lode mcp` over stdio."""

    def __init__(self, *extra_args):
        self.tmp = Path(tempfile.mkdtemp(prefix="lode-mcp-py-"))
        self.root = self.tmp / "shop"
        shutil.copytree(FIXTURE, self.root)
        self.params = StdioServerParameters(
            command=str(LODE),
            args=["mcp", "--root", str(self.root), "--cache-dir", str(self.tmp / "cache"), *extra_args],
            env={"XDG_CONFIG_HOME": str(self.tmp / "config")},
        )
        self.errlog = open(self.tmp / "stderr.log", "w+")

    async def __aenter__(self):
        # One exit stack for both contexts: when a check fails, the session's
        # exit re-raises (in an exception group) and the stdio client must
        # still close, or the server keeps its stdin and the run never ends.
        self._stack = AsyncExitStack()
        try:
            read, write = await self._stack.enter_async_context(
                stdio_client(self.params, errlog=self.errlog)
            )
            self.session = await self._stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
        except BaseException:
            await self._close(*sys.exc_info())
            raise
        return self

    async def __aexit__(self, *exc):
        await self._close(*exc)

    async def _close(self, *exc):
        try:
            await self._stack.__aexit__(*exc)
        finally:
            self.errlog.seek(0)
            stderr = self.errlog.read()
            self.errlog.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
        assert "panicked" not in stderr, stderr

    async def call(self, tool, args):
        return await self.session.call_tool(tool, args)


def text(result):
    return "".join(c.text for c in result.content if c.type == "text")


def error_code(result):
    assert result.is_error, f"expected an error, got: {text(result)}"
    code = result.structured_content["error"]["code"]
    assert text(result).startswith(code + ": "), text(result)
    return code


async def lists_the_tools_with_a_small_schema():
    async with Server() as s:
        listed = await s.session.list_tools()
        assert [t.name for t in listed.tools] == ["search", "grep", "outline", "callers", "show", "gather", "ask", "map"], listed.tools
        for t in listed.tools:
            assert t.description.endswith("At most 12,000 characters."), t.description
            assert t.input_schema["type"] == "object"
        size = len(json.dumps(listed.model_dump(by_alias=True, exclude_none=True), ensure_ascii=False))
        print(f"    tools/list as the Python client holds it: {size} characters")
        assert size < 6150, size


async def search_finds_a_symbol():
    async with Server() as s:
        r = await s.call("search", {"query": "Cart"})
        assert not r.is_error, text(r)
        assert text(r).startswith("src/shop/cart.py:8-27  class Cart  "), text(r)
        assert r.structured_content["command"] == "search"
        assert r.structured_content["hits"][0]["symbol"] == "Cart"
        r = await s.call("outline", {"path": "src/shop/cart.py"})
        assert r.structured_content["symbols"][0]["name"] == "Cart", r.structured_content
        r = await s.call("grep", {"pattern": "apply_discount", "path": "src"})
        groups = r.structured_content["groups"]
        assert groups and all(g["path"].startswith("src/") for g in groups), groups


async def errors_carry_stable_codes():
    async with Server() as s:
        cases = [
            ("grep", {"pattern": "fn ("}, "lode.bad_regex"),
            ("search", {"query": "cart", "path": "/etc"}, "lode.bad_path"),
            ("outline", {"path": "../../etc/passwd"}, "lode.bad_path"),
            ("search", {"query": "cart", "top_k": "ten"}, "lode.bad_argument"),
            ("search", {"query": ["a", "list"]}, "lode.bad_argument"),
            ("search", {"query": "cart", "lang": "cobolt"}, "lode.bad_query"),
            ("search", {"query": "x" * 3_000_000}, "lode.bad_argument"),
        ]
        for tool, args, want in cases:
            r = await s.call(tool, args)
            got = error_code(r)
            assert got == want, (tool, str(args)[:80], got, text(r)[:200])
        try:
            await s.call("rm_rf", {})
            raise AssertionError("an unknown tool should be a protocol error")
        except MCPError as e:
            assert "search, grep, outline, callers, show, gather, ask, map" in str(e), e
        r = await s.call("search", {"query": "apply_discount"})
        assert r.structured_content["hits"][0]["symbol"] == "apply_discount"


async def an_edited_file_is_found_by_the_next_search():
    async with Server() as s:
        r = await s.call("search", {"query": "restock_threshold"})
        assert "restock_threshold" not in text(r)
        (s.root / "src" / "shop" / "stock.py").write_text(
            "def restock_threshold(sku):\n    return 5\n"
        )
        r = await s.call("search", {"query": "restock_threshold"})
        assert text(r).startswith("src/shop/stock.py:1-2  function restock_threshold"), text(r)


async def a_cancelled_call_leaves_the_session_working():
    async with Server() as s:
        # The first call indexes; abandon it mid-way, then use the session.
        task = asyncio.ensure_future(s.call("search", {"query": "payment gateway"}))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, MCPError):
            pass
        r = await s.call("search", {"query": "Cart"})
        assert r.structured_content["hits"][0]["symbol"] == "Cart", text(r)


async def results_are_capped():
    async with Server("--max-chars", "2000") as s:
        (s.root / "src" / "many.py").write_text("".join(f"VALUE_{i} = {i}\n" for i in range(500)))
        r = await s.call("grep", {"pattern": "VALUE_"})
        t = text(r)
        compact = json.dumps(r.structured_content, ensure_ascii=False, separators=(",", ":"))
        assert len(t) <= 2000 and len(compact) <= 2000, (len(t), len(compact))
        omitted = r.structured_content["omitted_lines"]
        assert omitted > 400 and f"…[{omitted} more lines — narrow the query]" in t, t[-300:]


CHECKS = [
    lists_the_tools_with_a_small_schema,
    search_finds_a_symbol,
    errors_carry_stable_codes,
    an_edited_file_is_found_by_the_next_search,
    a_cancelled_call_leaves_the_session_working,
    results_are_capped,
]


# A check (teardown included) that takes longer fails; the run goes on.
CHECK_TIMEOUT_S = 120


async def run_check(check):
    """True when `check` passed. Bounded: a check that outlives its time is
    cancelled and abandoned without waiting for the cancellation to finish
    (a stuck teardown must not stop the run)."""
    task = asyncio.ensure_future(check())
    done, _ = await asyncio.wait({task}, timeout=CHECK_TIMEOUT_S)
    if not done:
        task.cancel()
        print(f"FAIL {check.__name__}: no result within {CHECK_TIMEOUT_S} s")
        return False
    try:
        task.result()
        print(f"ok   {check.__name__}")
        return True
    except BaseException:
        print(f"FAIL {check.__name__}")
        traceback.print_exc()
        return False


async def main():
    if not LODE.is_file():
        print(f"no lode binary at {LODE}", file=sys.stderr)
        return 2
    unknown = [name for name in ONLY if name not in {c.__name__ for c in CHECKS}]
    if unknown:
        print(f"no such check: {', '.join(unknown)}", file=sys.stderr)
        return 2
    passed = failed = 0
    for check in CHECKS:
        if ONLY and check.__name__ not in ONLY:
            continue
        if await run_check(check):
            passed += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.pop("LODE_CACHE_DIR", None)
    status = asyncio.new_event_loop().run_until_complete(main())
    sys.stdout.flush()
    sys.stderr.flush()
    # Not asyncio.run: on the way out it waits for every task still pending,
    # and an abandoned check's would keep a failed run from exiting. Servers
    # left behind see their stdin close and exit.
    os._exit(status)

