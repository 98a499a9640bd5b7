// The official TypeScript SDK as the client of `talaria mcp`, over stdio or Streamable HTTP:
// connect (initialize and version negotiation), list tools, call read_file and terminal, a
// failing call, ping, and close; then a second client that offers one root, whose calls wait for
// it (over HTTP the server asks on the GET stream the SDK opens).
// Usage: node sdk_client.mjs /path/to/talaria stdio|http   (exit 0: all checks held; 77: SDK missing)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";

let Client, StdioClientTransport, StreamableHTTPClientTransport, ListRootsRequestSchema;
try {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ ListRootsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} catch (e) {
  console.error(`skipped: @modelcontextprotocol/sdk is not installed here (run make deps): ${e.message}`);
  process.exit(77);
}

const talaria = process.argv[2];
const mode = process.argv[3] ?? "stdio";
const root = mkdtempSync(join(tmpdir(), "talaria-sdk-"));
const home = mkdtempSync(join(tmpdir(), "talaria-sdk-home-"));
writeFileSync(join(root, "notes.txt"), "first line\nsecond line\n");
mkdirSync(join(root, "sub"));
writeFileSync(join(root, "sub", "in.txt"), "inside\n");

const env = { PATH: process.env.PATH, HOME: home, TALARIA_HOME: home };
let server = null;  // the HTTP server process (stdio: the SDK owns the process)

// Starts `talaria mcp --http 127.0.0.1:0` and resolves with the URL it prints on stderr.
function startHttpServer() {
  return new Promise((resolve, reject) => {
    server = spawn(talaria, ["mcp", "--http", "127.0.0.1:0", "--root", root], { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    const timer = setTimeout(() => reject(new Error(`no URL within 10 s: ${err}`)), 10000);
    server.stderr.on("data", (chunk) => {
      err += chunk;
      const m = err.match(/at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on("exit", (code) => reject(new Error(`talaria exited (${code}): ${err}`)));
  });
}

const url = mode === "http" ? new URL(await startHttpServer()) : null;
const newTransport = () => url
  ? new StreamableHTTPClientTransport(url)
  : new StdioClientTransport({ command: talaria, args: ["mcp", "--root", root], env, stderr: "inherit" });
const transport = newTransport();
const client = new Client({ name: "talaria-sdk-test", version: "1.0.0" });
let rooted = null;
try {
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, "talaria");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const expected of ["read_file", "write_file", "patch", "search_files", "terminal", "process"]) {
    assert.ok(names.includes(expected), `tools/list lacks ${expected}: ${names}`);
  }
  const read = tools.find((t) => t.name === "read_file");
  assert.equal(read.inputSchema.type, "object");
  assert.equal(read.annotations.readOnlyHint, true);

  const result = await client.callTool({ name: "read_file", arguments: { path: "notes.txt" } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  assert.match(result.content[0].text, /second line/);
  assert.match(result.structuredContent.content, /first line/);

  const shell = await client.callTool({ name: "terminal", arguments: { command: "echo from-sdk" } });
  assert.equal(shell.structuredContent.exit_code, 0, JSON.stringify(shell));
  assert.match(shell.structuredContent.output, /from-sdk/);

  const outside = await client.callTool({ name: "read_file", arguments: { path: "/etc/passwd" } });
  assert.equal(outside.isError, true, "a path outside --root is a tool error");

  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /-32602|Unknown tool|not found/i);
  await client.ping();

  // A client offering only sub/ as its root: its first call already stays inside it.
  rooted = new Client({ name: "talaria-sdk-roots", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
  rooted.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: `file://${join(root, "sub")}` }] }));
  await rooted.connect(newTransport());
  const beyond = await rooted.callTool({ name: "read_file", arguments: { path: join(root, "notes.txt") } });
  assert.equal(beyond.isError, true, `outside the client's root: ${JSON.stringify(beyond)}`);
  const within = await rooted.callTool({ name: "read_file", arguments: { path: join(root, "sub", "in.txt") } });
  assert.notEqual(within.isError, true, JSON.stringify(within));
  assert.match(within.content[0].text, /inside/);
  console.log(`ok: SDK client over ${mode}`);
} finally {
  await client.close();
  if (rooted) await rooted.close();
  if (server) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
