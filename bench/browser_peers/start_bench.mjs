// talaria's browser tools side by side with @playwright/mcp, one sitting, one page, one client.
//
//   npm ci --prefix bench/browser_peers --ignore-scripts
//   node bench/browser_peers/start_bench.mjs build/talaria [--rounds 3]
//
// The page is the peers' 300-row page (peers-wave2.md §3.6), served here on 127.0.0.1. Both
// servers are started over stdio by this script, in turns (talaria, playwright, talaria, ...),
// driven by the same JSON-RPC client, on the same Debian Chromium; each figure is the median of
// the rounds. Also measured: a bare Chromium launch (so the servers' own start can be told
// from the browser's), and `talaria call` through the browser daemon (a new process per call).
// Prints `METRIC name value unit` lines; nothing here asserts.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const talaria = path.resolve(process.argv[2] || "build/talaria");
const roundsArg = process.argv.indexOf("--rounds");
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
const chromium = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].find((p) => existsSync(p));
const playwrightMcp = path.join(here, "node_modules/@playwright/mcp/cli.js");
if (!chromium) {
  console.error("start_bench: no Chromium installed");
  process.exit(0);
}
if (!existsSync(playwrightMcp)) {
  console.error("start_bench: run `npm ci --prefix bench/browser_peers --ignore-scripts` first");
  process.exit(1);
}
const isRoot = process.getuid && process.getuid() === 0;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const metric = (name, value, unit) => console.log(`METRIC ${name} ${value.toFixed(2)} ${unit}`);

function page() {
  let rows = "";
  for (let i = 0; i < 300; ++i) {
    rows += `<li><a href='#r${i}'>Row link ${i}</a> <button onclick='this.dataset.c=1'>Buy ${i}` +
      `</button> <input aria-label='Qty ${i}' value='${i}'></li>`;
  }
  return "<!doctype html><html><head><title>Bench</title></head><body><h1>Catalogue</h1>" +
    "<form><label>Name <input name=n></label><label>Email <input type=email name=e></label>" +
    "<select name=s><option>a</option><option>b</option></select><button>Send</button></form>" +
    `<ul>${rows}</ul></body></html>`;
}

// One MCP server over stdio: newline-delimited JSON-RPC.
class StdioServer {
  constructor(argv, env) {
    this.started = now();
    this.child = spawn(argv[0], argv.slice(1), { env, stdio: ["pipe", "pipe", "pipe"] });
    this.pending = new Map();
    this.nextId = 1;
    this.buffer = "";
    this.stderr = "";
    this.child.stdout.on("data", (chunk) => this.onData(chunk));
    this.child.stderr.on("data", (chunk) => { this.stderr = (this.stderr + chunk).slice(-4000); });
    this.exited = new Promise((resolve) => this.child.on("exit", resolve));
  }
  onData(chunk) {
    this.buffer += chunk;
    let nl;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (!line) continue;
      let msg;
      try { msg = JSON.parse(line); } catch { continue; }
      if (msg.id !== undefined && this.pending.has(msg.id)) {
        this.pending.get(msg.id)(msg);
        this.pending.delete(msg.id);
      }
    }
  }
  request(method, params, timeoutMs = 120000) {
    const id = this.nextId++;
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} timed out: ${this.stderr}`)),
        timeoutMs);
      this.pending.set(id, (msg) => {
        clearTimeout(timer);
        if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result);
      });
    });
  }
  notify(method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
  }
  async callText(name, args) {
    const result = await this.request("tools/call", { name, arguments: args });
    const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text)
      .join("\n");
    if (result.isError) throw new Error(`${name}: ${text.slice(0, 400)}`);
    return text;
  }
  // Ends it by its pid: stdin closed, then SIGTERM, then SIGKILL, each waited for (bounded).
  async stop() {
    const wait = (ms) => Promise.race([this.exited, new Promise((r) => setTimeout(r, ms))]);
    this.child.stdin.end();
    if (await wait(5000) === undefined && this.child.exitCode === null) {
      this.child.kill("SIGTERM");
      if (await wait(5000) === undefined && this.child.exitCode === null) {
        this.child.kill("SIGKILL");
        await this.exited;
      }
    }
  }
}

// What differs between the two servers: how to start them and how their click names a ref.
function servers(url, home) {
  return {
    talaria: {
      argv: [talaria, "mcp", "--toolsets", "browser"],
      env: { ...process.env, TALARIA_HOME: home, HOME: path.dirname(home) },
      refOf: (text, label) => text.match(new RegExp(`button \\\\?"${label}\\\\?" \\[ref=(e\\d+)\\]`)),
      click: (ref, label) => ({ ref: "@" + ref }),
    },
    playwright: {
      argv: [process.execPath, playwrightMcp, "--headless", "--isolated", "--executable-path",
        chromium, "--output-dir", path.join(path.dirname(home), "playwright-out"),
        ...(isRoot ? ["--no-sandbox"] : [])],
      env: { ...process.env },
      refOf: (text, label) => text.match(new RegExp(`button "${label}" \\[ref=(e\\d+)\\]`)),
      click: (ref, label) => ({ element: `${label} button`, target: ref }),
    },
  };
}

async function measureServer(name, spec, url) {
  const server = new StdioServer(spec.argv, spec.env);
  const out = {};
  try {
    await server.request("initialize", {
      protocolVersion: "2025-06-18", capabilities: {},
      clientInfo: { name: "talaria-start-bench", version: "1" },
    });
    out.init = now() - server.started;
    server.notify("notifications/initialized", {});
    const tools = await server.request("tools/list", {});
    out.list = now() - server.started;
    out.tools = tools.tools.length;
    const navStart = now();
    await server.callText("browser_navigate", { url });
    out.firstResult = now() - server.started;
    out.navigate = now() - navStart;
    const snaps = [];
    let text = "";
    for (let i = 0; i < 7; ++i) {
      const t = now();
      text = await server.callText("browser_snapshot", {});
      snaps.push(now() - t);
    }
    out.snapshot = median(snaps);
    out.snapshotBytes = Buffer.byteLength(text);
    const clicks = [];
    for (let i = 0; i < 7; ++i) {
      const label = `Buy ${10 + i}`;
      const m = spec.refOf(text, label);
      if (!m) throw new Error(`${name}: no ref for ${label} in the snapshot`);
      const t = now();
      const after = await server.callText("browser_click", spec.click(m[1], label));
      clicks.push(now() - t);
      if (spec.refOf(after, `Buy ${11 + i}`)) text = after;  // refs as the server now has them
    }
    out.click = median(clicks);
  } finally {
    await server.stop();
  }
  return out;
}

// A bare headless Chromium: spawn until it says its DevTools endpoint is up, and until it answers
// its first CDP command (Browser.getVersion over --remote-debugging-pipe, sent at once): the
// endpoint is announced well before the browser can serve a command, and a server's first
// result cannot come before that.
async function chromiumLaunch() {
  const profile = mkdtempSync(path.join(os.tmpdir(), "start-bench-chromium-"));
  const t = now();
  const child = spawn(chromium, ["--headless", "--remote-debugging-port=0", "--remote-debugging-pipe",
    `--user-data-dir=${profile}`, ...(isRoot ? ["--no-sandbox"] : []), "about:blank"],
  { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const listening = new Promise((resolve) => {
    let err = "";
    child.stderr.on("data", (c) => {
      err += c;
      if (err.includes("DevTools listening on")) resolve(now() - t);
    });
  });
  const answered = new Promise((resolve) => {
    let got = "";
    child.stdio[4].on("data", (c) => {
      got += c;
      if (got.includes("\0")) resolve(now() - t);
    });
  });
  child.stdio[3].write(JSON.stringify({ id: 1, method: "Browser.getVersion" }) + "\0");
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("chromium did not start")), 60000);
  });
  const [listen, ready] = await Promise.race([Promise.all([listening, answered]), timeout]);
  clearTimeout(timer);
  child.kill("SIGKILL");
  await exited;
  rmSync(profile, { recursive: true, force: true });
  return { listen, ready };
}

// `talaria call` through the browser daemon: every call a new process. (Spawned without
// blocking: the page is served by this very process.)
async function talariaCalls(url, home) {
  const env = { ...process.env, TALARIA_HOME: home, HOME: path.dirname(home) };
  const call = (...args) => new Promise((resolve, reject) => {
    const t = now();
    const child = spawn(talaria, ["call", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => { out += c; });
    child.stderr.on("data", (c) => { err += c; });
    const timer = setTimeout(() => child.kill("SIGKILL"), 120000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`talaria call ${args[0]}: ${out} ${err}`));
      else resolve({ ms: now() - t, out });
    });
  });
  const first = await call("browser_navigate", `url=${url}`);
  const snaps = [];
  let text = "";
  for (let i = 0; i < 7; ++i) {
    const s = await call("browser_snapshot");
    snaps.push(s.ms);
    text = s.out;
  }
  const m = text.match(/button \\"Buy 3\\" \[ref=(e\d+)\]/);
  const click = m ? (await call("browser_click", `ref=@${m[1]}`)).ms : NaN;
  await call("browser_close");
  return { first: first.ms, snapshot: median(snaps), click };
}

async function main() {
  const html = page();
  const site = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html);
  });
  await new Promise((r) => site.listen(0, "127.0.0.1", r));
  const port = site.address().port;
  const url = `http://127.0.0.1:${port}/`;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "start-bench-"));
  const home = path.join(scratch, ".talaria");
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, "config.yaml"),
    `browser:\n  allow_private: ["127.0.0.1:${port}"]\n`);
  const specs = servers(url, home);
  const results = { talaria: [], playwright: [] };
  const launches = [];
  const calls = [];
  try {
    for (let round = 0; round < rounds; ++round) {
      launches.push(await chromiumLaunch());
      for (const name of ["talaria", "playwright"]) {
        results[name].push(await measureServer(name, specs[name], url));
      }
      calls.push(await talariaCalls(url, home));
    }
  } finally {
    site.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  const launch = median(launches.map((l) => l.listen));
  const ready = median(launches.map((l) => l.ready));
  metric("browser_peer_chromium_launch_ms", launch, "ms");
  metric("browser_peer_chromium_cdp_ready_ms", ready, "ms");
  for (const name of ["talaria", "playwright"]) {
    const r = results[name];
    const m = (k) => median(r.map((x) => x[k]));
    metric(`browser_peer_${name}_init_ms`, m("init"), "ms");
    metric(`browser_peer_${name}_tools_list_ms`, m("list"), "ms");
    metric(`browser_peer_${name}_start_to_first_result_ms`, m("firstResult"), "ms");
    metric(`browser_peer_${name}_start_to_first_result_ex_launch_ms`, m("firstResult") - launch,
      "ms");
    metric(`browser_peer_${name}_start_to_first_result_ex_cdp_ready_ms`, m("firstResult") - ready,
      "ms");
    metric(`browser_peer_${name}_navigate_ms`, m("navigate"), "ms");
    metric(`browser_peer_${name}_snapshot_p50_ms`, m("snapshot"), "ms");
    metric(`browser_peer_${name}_click_p50_ms`, m("click"), "ms");
    metric(`browser_peer_${name}_snapshot_bytes`, m("snapshotBytes"), "bytes");
    metric(`browser_peer_${name}_tools`, m("tools"), "tools");
  }
  metric("browser_call_daemon_first_navigate_ms", median(calls.map((c) => c.first)), "ms");
  metric("browser_call_daemon_snapshot_p50_ms", median(calls.map((c) => c.snapshot)), "ms");
  metric("browser_call_daemon_click_ms", median(calls.map((c) => c.click)), "ms");
}

main().catch((e) => {
  console.error(`start_bench: ${e.stack || e}`);
  process.exit(1);
});
