// The official TypeScript SDK 1.x as a client of revision 2025-11-25 in front of
// mcp-bridge-vscode, tried as a new user would.
//
//   node legacy_stdio_client.mjs <mcp-bridge-vscode> <bridge-fixture-server>
//
// It starts `mcp-bridge-vscode -- bridge-fixture-server --many-tools 150`, checks
// the tool list across its pages with a draft-07 validator (as VS Code does), calls
// tools through all three milestones, and closes stdin: the bridge must exit 0
// within 2 s. Exit code 0 when every check passed; 1 with the failed check.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

const [bridge, fixture] = process.argv.slice(2);
if (!bridge || !fixture) {
  console.error('usage: node legacy_stdio_client.mjs <mcp-bridge-vscode> <bridge-fixture-server>');
  process.exit(2);
}

/** A stdio transport that records every frame in order and tells the exit code. */
class PipeTransport {
  constructor(command, args) {
    this.command = command;
    this.args = args;
    this.frames = [];
    this.stderr = '';
    this.readBuffer = new ReadBuffer();
  }

  async start() {
    this.child = spawn(this.command, this.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
    this.child.stderr.on('data', (chunk) => { this.stderr += chunk; });
    this.child.stdout.on('data', (chunk) => {
      this.readBuffer.append(chunk);
      for (let message; (message = this.readBuffer.readMessage()) !== null;) {
        this.frames.push(message);
        this.onmessage?.(message);
      }
    });
    await new Promise((resolve, reject) => { this.child.on('spawn', resolve); this.child.on('error', reject); });
  }

  setProtocolVersion(version) { this.protocolVersion = version; }

  async send(message) { this.child.stdin.write(serializeMessage(message)); }

  async close() { this.child.stdin.end(); }
}

let failures = 0;
function check(condition, what) {
  if (condition) {
    console.log(`ok   ${what}`);
  } else {
    failures += 1;
    console.log(`FAIL ${what}`);
  }
}

async function waitFor(predicate, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return predicate();
}

function textOf(result) {
  return result?.content?.find((block) => block.type === 'text')?.text;
}

/** Every array schema has items that are true in JavaScript (R6 b). */
function arraysHaveItems(schema) {
  if (Array.isArray(schema)) return schema.every(arraysHaveItems);
  if (!schema || typeof schema !== 'object') return true;
  if (schema.type === 'array' && !schema.items) return false;
  return Object.values(schema).every(arraysHaveItems);
}

/** A form answer from the requested schema: first enum value, "Ada", 36, true. */
function formContent(schema) {
  const content = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    if (property.enum) content[name] = property.enum[0];
    else if (property.type === 'string') content[name] = 'Ada';
    else if (property.type === 'integer' || property.type === 'number') content[name] = 36;
    else if (property.type === 'boolean') content[name] = true;
  }
  return content;
}

const transport = new PipeTransport(bridge, ['--', fixture, '--many-tools', '150']);
const client = new Client(
  { name: 'interop', version: '1.0.0' },
  { capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } } },
);

const urlElicitations = [];
const cwdRoot = pathToFileURL(process.cwd()).href;
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  if (request.params.mode === 'url') {
    urlElicitations.push(request.params);
    return { action: 'accept' };
  }
  return { action: 'accept', content: formContent(request.params.requestedSchema) };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  model: 'interop', role: 'assistant', content: { type: 'text', text: 'hello' },
}));
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: cwdRoot, name: 'cwd' }] }));

const timer = setTimeout(() => { console.log('FAIL the run took more than 120 s'); process.exit(1); }, 120_000);

await client.connect(transport);
const connectedAt = transport.frames.length;
check(transport.protocolVersion === '2025-11-25', `negotiated revision ${transport.protocolVersion}`);
check(client.getServerVersion()?.name === 'bridge-fixture-server', 'serverInfo names the fixture');
const capabilities = client.getServerCapabilities();
check(capabilities?.tools?.listChanged && capabilities?.prompts?.listChanged && capabilities?.resources?.listChanged
  && capabilities?.resources?.subscribe && capabilities?.logging, 'initialize declares the list changes, subscribe and logging');
check(!capabilities?.tasks, 'initialize declares no tasks');

// M3: after the first acknowledgment, one list change of each list.
const listChanged = (method) => transport.frames.slice(connectedAt).filter((f) => f.method === method).length;
const lists = ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed'];
check(await waitFor(() => lists.every((m) => listChanged(m) === 1), 10_000), 'one list change of each list after the start');

// R4, R6: every page, every schema.
const ajv = new Ajv({ strict: false });
let cursor;
let pages = 0;
const tools = [];
do {
  const page = await client.listTools(cursor === undefined ? {} : { cursor });
  pages += 1;
  check(page.nextCursor === undefined || typeof page.nextCursor === 'string', `page ${pages}: nextCursor is a string or absent`);
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor !== undefined && pages < 1000);
check(pages >= 2, `tools/list has ${pages} pages`);
check(tools.length === 171, `${tools.length} tools (21 and tool_0..tool_149)`);
const badSchemas = tools.filter((tool) => !ajv.validateSchema({ properties: {}, ...tool.inputSchema }));
check(badSchemas.length === 0, `every inputSchema is a valid draft-07 schema (${badSchemas.map((t) => t.name).join(', ') || 'none fails'})`);
check(tools.every((tool) => arraysHaveItems(tool.inputSchema)), 'every array schema has truthy items');

// M1: tools.
check(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) === '5', 'add 2 3 gives 5');
check(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) === 'hello', 'echo gives its text');
check(textOf(await client.callTool({ name: 'bare_array', arguments: { values: [1, 2, 3] } })) === '3 values', 'bare_array counts its values');

// M2: the rounds of input, done by the bridge.
const call = async (name, args = {}) => textOf(await client.callTool({ name, arguments: args }));
check(await call('ask_form') === 'form: accept {"name":"Ada","age":36,"subscribe":true,"color":"red"}', 'ask_form: the form round');
check(await call('ask_url') === 'url: accept', 'ask_url: the URL round');
check(await call('ask_url_twice') === 'url twice: accept', 'ask_url_twice: the URL asked again becomes Continue');
check(await call('ask_bad_url') === 'url: decline', 'ask_bad_url: the bridge declines a file: URL');
check(await call('sample') === 'model: hello', 'sample: the sampling round');
check(await call('list_roots') === `roots: ${cwdRoot}`, 'list_roots: the roots round');
check(await call('multi') === 'name: Ada (accept); roots: 1', 'multi: two inputs in one round');
const prompt = await client.getPrompt({ name: 'ask_name', arguments: {} });
check(prompt.messages?.[0]?.content?.text === 'Hello, Ada.', 'prompt ask_name: the form round of prompts/get');
check(urlElicitations.length === 2, `two URL elicitations reached the client (${urlElicitations.length})`);
check(urlElicitations.every((e) => e.url.startsWith('https://')), 'no URL other than https reached the client');
const ids = urlElicitations.map((e) => e.elicitationId);
check(new Set(ids).size === 2 && ids.every((id) => typeof id === 'string'), 'each URL elicitation has its own elicitationId');
const completes = transport.frames.filter((f) => f.method === 'notifications/elicitation/complete').map((f) => f.params.elicitationId);
check(ids.every((id) => completes.filter((c) => c === id).length === 1) && completes.length === 2, 'one elicitation/complete for each URL');

// M3: the list change of toggle comes before its result.
const frameIndex = (predicate) => transport.frames.findIndex(predicate);
const before = transport.frames.length;
check(await call('toggle', { enabled: false }) === 'tool toggled: disabled', 'toggle disables the tool toggled');
const toggleResult = transport.frames.findLastIndex((f) => f.result?.content?.[0]?.text === 'tool toggled: disabled');
const toggleChange = frameIndex((f, i) => i >= before && f.method === 'notifications/tools/list_changed');
check(toggleChange >= 0 && toggleChange < toggleResult, 'the list change of toggle comes before its result');
const afterToggle = [];
for (let next, first = true; first || next !== undefined; first = false) {
  const page = await client.listTools(next === undefined ? {} : { cursor: next });
  afterToggle.push(...page.tools.map((t) => t.name));
  next = page.nextCursor;
}
check(!afterToggle.includes('toggled') && afterToggle.length === 170, 'the next list has no toggled');
await call('toggle', { enabled: true });

// O7: subscribe, touch, unsubscribe.
const notes = 'file:///fixture/notes.txt';
await client.subscribeResource({ uri: notes });
let mark = transport.frames.length;
check(await call('touch', { uri: notes }) === `touched ${notes}`, 'touch of a subscribed resource');
const updates = transport.frames.slice(mark).filter((f) => f.method === 'notifications/resources/updated');
check(updates.length === 1 && updates[0].params.uri === notes && !updates[0].params._meta, 'one update without _meta before the result');
const updateIndex = frameIndex((f, i) => i >= mark && f.method === 'notifications/resources/updated');
const touchIndex = frameIndex((f, i) => i >= mark && f.result?.content?.[0]?.text === `touched ${notes}`);
check(updateIndex < touchIndex, 'the update comes before the result of touch');
await client.unsubscribeResource({ uri: notes });
mark = transport.frames.length;
await call('touch', { uri: notes });
check(!transport.frames.slice(mark).some((f) => f.method === 'notifications/resources/updated'), 'no update after unsubscribe');

// O5: the level of setLevel.
await client.setLoggingLevel('warning');
mark = transport.frames.length;
check(await call('log') === 'logged 4 messages', 'log sends its messages');
const levels = transport.frames.slice(mark).filter((f) => f.method === 'notifications/message').map((f) => f.params.level);
check(JSON.stringify(levels) === '["warning","error"]', `log messages at warning or above (${levels})`);

check(!transport.frames.some((f) => f.method === 'notifications/cancelled'), 'no notifications/cancelled ever reached the client');

// R7, the stop sequence: the end of stdin, exit 0 within 2 s.
const closedAt = Date.now();
await transport.close();
const exit = await Promise.race([transport.exited, new Promise((resolve) => setTimeout(() => resolve(null), 5000))]);
check(exit?.code === 0, `the bridge exits with code ${exit?.code} (signal ${exit?.signal})`);
check(exit && exit.at - closedAt < 2000, `the bridge stops ${exit ? exit.at - closedAt : '>5000'} ms after the end of stdin`);
const untagged = transport.stderr.split('\n').filter((l) => l && !l.startsWith('mcp-bridge-vscode: ') && !l.startsWith('bridge-fixture-server: '));
check(untagged.length === 0, `every stderr line is tagged (${untagged.slice(0, 3).join(' | ') || 'all tagged'})`);

clearTimeout(timer);
if (failures > 0) {
  console.log(`${failures} checks failed. stderr of the bridge:\n${transport.stderr}`);
  process.exit(1);
}
console.log('all checks passed');
