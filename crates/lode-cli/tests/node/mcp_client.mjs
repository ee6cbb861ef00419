// `lode mcp` driven by the official TypeScript MCP SDK (npm `@modelcontextprotocol/sdk`).
//
// Usage: node mcp_client.mjs SDK_DIR PATH_TO_LODE
//   SDK_DIR: a directory whose node_modules holds the SDK (.ci/run installs it into a
//   temporary one). Each check starts `lode mcp` on a copy of tests/fixtures/shop with its
//   own cache; the closing line is "N passed, M failed", and the exit status 1 when anything
//   failed. Every check is bounded by CHECK_TIMEOUT_MS.

import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [sdkDir, lodeArg] = process.argv.slice(2);
if (!sdkDir || !lodeArg) {
  console.error("usage: node mcp_client.mjs SDK_DIR PATH_TO_LODE");
  process.exit(2);
}
const lode = resolve(lodeArg);
const require = createRequire(join(resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "shop");
const CHECK_TIMEOUT_MS = 120_000;
const TOOLS = ["search", "grep", "outline", "callers", "show", "gather", "ask", "map"];

function assert(cond, what) {
  if (!cond) throw new Error(what);
}

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");

/// A fixture copy, a cache and a connected client; `close` removes them.
async function server() {
  const tmp = mkdtempSync(join(tmpdir(), "lode-mcp-ts-"));
  const root = join(tmp, "shop");
  cpSync(FIXTURE, root, { recursive: true });
  const transport = new StdioClientTransport({
    command: lode,
    args: ["mcp", "--root", root, "--cache-dir", join(tmp, "cache")],
    env: { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: join(tmp, "config") },
    stderr: "ignore",
  });
  const client = new Client({ name: "lode-ci-ts", version: "0" });
  try {
    await client.connect(transport);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return {
    root,
    client,
    call: (name, args) => client.callTool({ name, arguments: args }),
    close: async () => {
      await client.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

const checks = {
  async lists_the_tools(s) {
    const { tools } = await s.client.listTools();
    const names = tools.map((t) => t.name);
    assert(JSON.stringify(names) === JSON.stringify(TOOLS), `tools: ${names}`);
    for (const t of tools) {
      assert(t.inputSchema.type === "object", `${t.name}: schema ${JSON.stringify(t.inputSchema)}`);
      assert(t.description.endsWith("At most 12,000 characters."), t.description);
    }
  },
  async search_outline_and_grep_answer(s) {
    let r = await s.call("search", { query: "Cart" });
    assert(!r.isError, text(r));
    assert(text(r).startsWith("src/shop/cart.py:8-27  class Cart  "), text(r));
    assert(r.structuredContent.hits[0].symbol === "Cart", JSON.stringify(r.structuredContent));
    r = await s.call("outline", { path: "src/shop/cart.py" });
    assert(r.structuredContent.symbols[0].name === "Cart", JSON.stringify(r.structuredContent));
    r = await s.call("grep", { pattern: "apply_discount", path: "src" });
    const groups = r.structuredContent.groups;
    assert(groups.length > 0 && groups.every((g) => g.path.startsWith("src/")), JSON.stringify(groups));
  },
  async errors_carry_stable_codes(s) {
    const cases = [
      ["grep", { pattern: "fn (" }, "lode.bad_regex"],
      ["search", { query: "cart", path: "/etc" }, "lode.bad_path"],
      ["search", { query: "cart", top_k: "ten" }, "lode.bad_argument"],
    ];
    for (const [tool, args, want] of cases) {
      const r = await s.call(tool, args);
      assert(r.isError, `${tool}: expected an error, got ${text(r)}`);
      const code = r.structuredContent.error.code;
      assert(code === want && text(r).startsWith(`${code}: `), `${tool}: ${code}: ${text(r)}`);
    }
  },
  async an_edited_file_is_found_by_the_next_search(s) {
    writeFileSync(join(s.root, "src", "shop", "stock.py"), "def restock_threshold(sku):\n    return 5\n");
    const r = await s.call("search", { query: "restock_threshold" });
    assert(text(r).startsWith("src/shop/stock.py:1-2  function restock_threshold"), text(r));
  },
};

async function run(name, check) {
  let s;
  let timer;
  try {
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no result within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    });
    await Promise.race([
      (async () => {
        s = await server();
        await check(s);
      })(),
      timeout,
    ]);
    console.log(`ok   ${name}`);
    return true;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
    return false;
  } finally {
    clearTimeout(timer);
    await s?.close().catch(() => {});
  }
}

let passed = 0;
let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  if (await run(name, check)) passed++;
  else failed++;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
