// The client of the official conformance suite's client mode (`conformance client
// --command "<node> suite_client_driver.mjs <bridge> <fixture> <dir>"`): the suite
// appends the URL of its scenario server as the last argument and sets
// MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT for some scenarios).
//
// The driver starts `mcp-bridge-vscode --token-store memory --redirect-port <free>
// [--client-id ...] <url>` with $BROWSER set to a script that runs the fixture's test
// browser (`bridge-fixture-server --browse "$1"`), then plays VS Code over the
// bridge's stdio with plain JSON-RPC lines (no SDK: every frame is the one written
// here): initialize of 2025-11-25, notifications/initialized, tools/list and a call
// of every listed tool, resources and prompts when the server has them; it answers
// the bridge's requests as VS Code would (a URL elicitation: accept and open the URL
// in the same test browser; a form elicitation: accept with a value for each field;
// sampling; roots). Then it closes the bridge's stdin, waits for its exit and exits
// with its code. The bridge's stderr goes to the driver's stderr (the suite keeps it
// in stderr.txt); the driver's own lines start with `driver: `.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, rmSync, statSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [bridgeExe, fixtureExe, url] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
/** One exchange with the bridge, sign-in included (the suite's limit is 30 s). */
const EXCHANGE_MS = 20000;

function log(text) {
  process.stderr.write(`driver: ${text}\n`);
}

/** Whether `port` (0: any) can be bound on 127.0.0.1 now; the port bound, or null. */
function tryPort(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const bound = server.address().port;
      server.close(() => resolve(bound));
    });
  });
}

/** The ports that the drivers running now claimed: a file each, made only once. */
const CLAIMS = join(tmpdir(), "mcp-bridge-suite-driver-ports");
/** A claim this old is of a driver that was killed before it could remove it. */
const STALE_CLAIM_MS = 10 * 60 * 1000;

/**
 * Claims `port` for this driver until it exits: the suite runs its scenarios at the
 * same time, each with a driver of its own, and two of them must not both pick a
 * port that nothing listens on yet ("another program uses the redirect port").
 */
function claim(port) {
  const file = join(CLAIMS, String(port));
  try {
    mkdirSync(CLAIMS, { recursive: true });
    writeFileSync(file, String(process.pid), { flag: "wx" });
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < STALE_CLAIM_MS) return false;
      writeFileSync(file, String(process.pid));
    } catch {
      return false;
    }
  }
  process.on("exit", () => {
    try {
      unlinkSync(file);
    } catch {
      // Gone already: nothing to release.
    }
  });
  return true;
}

/**
 * A port that nothing listens on now and no other driver claimed, for
 * --redirect-port. It comes from below the ephemeral range (32768 on Linux): a port
 * of that range can be taken as the local port of another test's outgoing
 * connection before the bridge binds it. And from below the ports of
 * harness-sim/src/ports.rs (20000 and up), which the Rust tests that run at the same
 * time hand out: one of them could bind this port first.
 */
async function freePort() {
  const floor = 10000;
  const span = 20000 - floor;
  const start = Math.floor(Math.random() * span);
  for (let step = 0; step < 200; step += 1) {
    const candidate = floor + ((start + step) % span);
    if (!claim(candidate)) continue;
    const port = await tryPort(candidate);
    if (port !== null) return port;
  }
  return tryPort(0);
}

/** The bridge's options for the scenario: the client ID of the context, if any. */
function scenarioOptions() {
  const options = [];
  const env = {};
  // auth/basic-cimd: the suite's authorization server takes its own placeholder
  // document URL as the client ID. The bridge cannot reach that host; it uses the
  // URL all the same and leaves the document to the authorization server.
  if (scenario === "auth/basic-cimd") {
    options.push("--client-metadata-url", "https://conformance-test.local/client-metadata.json");
  }
  if (context.client_id) {
    options.push("--client-id", context.client_id);
    if (context.client_secret) {
      env.MCP_BRIDGE_CLIENT_SECRET = context.client_secret;
    }
    if (context.issuer) {
      options.push("--client-issuer", context.issuer);
    }
  }
  return { options, env };
}

/** A value for each required field of a JSON schema, as a user would type. */
function valueFor(schema) {
  switch (schema?.type) {
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    case "object":
      return objectFor(schema);
    case "array":
      return [];
    default:
      return schema?.enum?.[0] ?? "test";
  }
}

function objectFor(schema) {
  const value = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    value[name] = valueFor(property);
  }
  return value;
}

/** The arguments of a call: the context's, `add_numbers` as tools_call expects, else the schema's. */
function argumentsFor(tool) {
  if (tool.name === "add_numbers") {
    return { a: 5, b: 3 };
  }
  return objectFor(tool.inputSchema);
}

const dir = mkdtempSync(join(tmpdir(), "suite-client-driver-"));
const browser = join(dir, "browser");
// The page the browser ends on goes nowhere: the suite keeps stdout and stderr in one
// file, and the page (without a newline) began a line that a `driver: ` line then
// ended, whichever of the two streams it went to. The browser's own lines (its
// stderr, one a hop) stay, for the check of secrets.
writeFileSync(browser, `#!/bin/sh\nexec '${fixtureExe}' --browse "$1" >/dev/null\n`);
chmodSync(browser, 0o755);

/** Opens a URL in the test browser, as VS Code opens the URL of an elicitation. */
function browse(target) {
  return new Promise((resolve) => {
    const child = spawn(browser, [target], { stdio: ["ignore", "ignore", "inherit"] });
    child.on("exit", (code) => resolve(code));
  });
}

const port = await freePort();
const { options, env } = scenarioOptions();
const args = ["--token-store", "memory", "--redirect-port", String(port), ...options, url];
log(`scenario ${scenario}: ${bridgeExe} ${args.join(" ")}`);
const bridge = spawn(bridgeExe, args, {
  env: { ...process.env, ...env, BROWSER: browser },
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => bridge.on("exit", (code) => resolve(code ?? 1)));
// A bridge that exited at once (arguments that are not valid) closes its stdin.
bridge.stdin.on("error", (error) => log(`the bridge's stdin: ${error.code ?? error.message}`));

let nextId = 1;
const pending = new Map();

function send(frame) {
  bridge.stdin.write(`${JSON.stringify(frame)}\n`);
}

function request(method, params) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`no answer to ${method} in ${EXCHANGE_MS} ms`));
    }, EXCHANGE_MS);
    pending.set(id, (frame) => {
      clearTimeout(timer);
      resolve(frame);
    });
  });
}

/** The bridge's requests to VS Code, answered as VS Code would. */
async function answer(frame) {
  const { id, method, params } = frame;
  switch (method) {
    case "elicitation/create":
      if (params?.mode === "url") {
        log(`URL elicitation: accepted, opening its URL`);
        send({ jsonrpc: "2.0", id, result: { action: "accept" } });
        await browse(params.url);
      } else {
        send({ jsonrpc: "2.0", id, result: { action: "accept", content: objectFor(params?.requestedSchema) } });
      }
      return;
    case "sampling/createMessage":
      send({
        jsonrpc: "2.0",
        id,
        result: { role: "assistant", content: { type: "text", text: "a sample" }, model: "driver", stopReason: "endTurn" },
      });
      return;
    case "roots/list":
      send({ jsonrpc: "2.0", id, result: { roots: [] } });
      return;
    case "ping":
      send({ jsonrpc: "2.0", id, result: {} });
      return;
    default:
      send({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
}

createInterface({ input: bridge.stdout }).on("line", (line) => {
  let frame;
  try {
    frame = JSON.parse(line);
  } catch {
    log(`not JSON on the bridge's stdout: ${line}`);
    process.exitCode = 1;
    return;
  }
  if (frame.method !== undefined && frame.id !== undefined) {
    answer(frame);
  } else if (frame.method === undefined && pending.has(frame.id)) {
    const resolve = pending.get(frame.id);
    pending.delete(frame.id);
    resolve(frame);
  }
});

/** Writes the outcome of one request to stderr. */
function report(method, frame) {
  if (frame.error) {
    log(`${method}: error ${frame.error.code} ${frame.error.message}`);
  } else {
    log(`${method}: ok`);
  }
  return frame;
}

async function play() {
  const init = report(
    "initialize",
    await request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
      clientInfo: { name: "Visual Studio Code", version: "1.141.0" },
    }),
  );
  if (init.error) {
    return;
  }
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const capabilities = init.result?.capabilities ?? {};
  if (capabilities.tools) {
    const listed = report("tools/list", await request("tools/list", {}));
    const tools = listed.result?.tools ?? [];
    // The context names the calls of some scenarios (http-custom-headers).
    const calls = context.toolCalls ?? tools.map((tool) => ({ name: tool.name, arguments: argumentsFor(tool) }));
    // json-schema-2020-12-preservation: the schema VS Code got, sent back verbatim.
    const focal = tools.find((tool) => tool.name === "json_schema_2020_12_tool");
    if (focal && !context.toolCalls) {
      const echo = calls.find((call) => call.name === "json_schema_echo");
      if (echo) {
        echo.arguments = { schema: focal.inputSchema };
      }
    }
    for (const call of calls) {
      report(`tools/call ${call.name}`, await request("tools/call", call));
    }
  }
  if (capabilities.resources) {
    const listed = report("resources/list", await request("resources/list", {}));
    const first = listed.result?.resources?.[0];
    if (first) {
      report(`resources/read ${first.uri}`, await request("resources/read", { uri: first.uri }));
    }
  }
  if (capabilities.prompts) {
    const listed = report("prompts/list", await request("prompts/list", {}));
    const first = listed.result?.prompts?.[0];
    if (first) {
      const promptArgs = Object.fromEntries((first.arguments ?? []).map((arg) => [arg.name, "test"]));
      report(`prompts/get ${first.name}`, await request("prompts/get", { name: first.name, arguments: promptArgs }));
    }
  }
}

try {
  await play();
} catch (error) {
  log(`${error.message}`);
  process.exitCode = 1;
}
bridge.stdin.end();
const code = await exited;
log(`the bridge exited with ${code}`);
rmSync(dir, { recursive: true, force: true });
if (code !== 0) {
  process.exitCode = code;
}
process.exit();
