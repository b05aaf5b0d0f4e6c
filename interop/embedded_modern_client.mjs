// The official TypeScript SDK 2.x client (@modelcontextprotocol/client) as a client
// of revision 2026-07-28 in front of bridge-embedded-server: no initialize, so the
// server's rmcp transport answers without the bridge (the modern path, M5),
// and ask_name completes through the revision's input_required round (MRTR), which
// the client fulfils with its elicitation handler and retries.
//
//   node embedded_modern_client.mjs <bridge-embedded-server>
//
// What the SDK sends (read in node_modules/@modelcontextprotocol/client/dist): with
// versionNegotiation { mode: 'auto' } its stdio transport sends server/discover to a
// sibling process of its own (spawned from the same command, reaped after the
// answer), then starts the session process, whose first line is the first request
// of the caller, each request with the _meta envelope of 2026-07-28. A subclass of
// the transport is probed in place instead: server/discover is then the first line
// of the one process. The script records every frame that the SDK's stdio
// transports write, and checks both forms.
//
// Exit code 0 when every check passed; 1 with the failed check.

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [server] = process.argv.slice(2);
if (!server) {
  console.error('usage: node embedded_modern_client.mjs <bridge-embedded-server>');
  process.exit(2);
}

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${what}`);
  if (!condition) failures += 1;
}

const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

// Every frame written by any StdioClientTransport (the session's and the probe's),
// with the transport that wrote it. Patched on the prototype, so the transport stays
// the SDK's base class and the SDK takes its sibling probe as it would for a user.
const sent = [];
const originalSend = StdioClientTransport.prototype.send;
StdioClientTransport.prototype.send = function (message, options) {
  sent.push({ transport: this, message });
  return originalSend.call(this, message, options);
};

const transport = new StdioClientTransport({ command: server, args: [], stderr: 'pipe' });
const client = new Client(
  { name: 'interop-embedded-modern', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: 'auto' },
  },
);
const questions = [];
client.setRequestHandler('elicitation/create', async (request) => {
  questions.push(request.params);
  return { action: 'accept', content: { name: 'Ada' } };
});
const errors = [];
client.onerror = (error) => errors.push(String(error));

await client.connect(transport);

const probe = sent.filter((entry) => entry.transport !== transport);
const session = () => sent.filter((entry) => entry.transport === transport).map((entry) => entry.message);
check(
  probe.length === 1 && probe[0].message.method === 'server/discover',
  `the SDK probed with one server/discover on a sibling process (${probe.map((entry) => entry.message.method)})`,
);
check(
  probe[0]?.message.params?._meta?.[VERSION_KEY] === '2026-07-28',
  'the probe carries protocol version 2026-07-28 in its _meta',
);
const discover = client.getDiscoverResult();
check(
  Array.isArray(discover?.supportedVersions) && discover.supportedVersions.includes('2026-07-28'),
  `the server's discover result offers 2026-07-28 (${discover?.supportedVersions})`,
);
check(client.getNegotiatedProtocolVersion() === '2026-07-28', 'the client negotiated 2026-07-28');
check(client.getServerVersion()?.name === 'bridge-embedded-server', 'the server names itself');
check(client.getServerCapabilities()?.tools !== undefined, 'the server declares tools');

const tools = (await client.listTools()).tools.map((tool) => tool.name);
const first = session()[0];
check(first?.method === 'tools/list', `the first line of the session process is tools/list, not initialize (${first?.method})`);
check(first?.params?._meta?.[VERSION_KEY] === '2026-07-28', 'the first request carries protocol version 2026-07-28 in its _meta');
check(['echo', 'add', 'ask_name'].every((name) => tools.includes(name)), `the tools are listed (${tools})`);

const textOf = (result) => result.content?.[0]?.text;
check(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) === 'hello', 'echo gives its text');
check(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) === '5', 'add 2 3 gives 5');
check(textOf(await client.callTool({ name: 'ask_name', arguments: {} })) === 'Hello, Ada.', 'ask_name greets after the input round');
check(
  questions.length === 1 && questions[0].message === 'Your name?' && questions[0].mode === 'form',
  'one form elicitation reached the elicitation handler',
);
const asks = session().filter((message) => message.method === 'tools/call' && message.params?.name === 'ask_name');
check(asks.length === 2, `ask_name went out twice: the call and its retry (${asks.length})`);
check(asks[0]?.params?.inputResponses === undefined, 'the first call carries no inputResponses');
const retry = asks[1]?.params;
check(
  retry?.inputResponses?.name?.action === 'accept' && retry?.inputResponses?.name?.content?.name === 'Ada',
  'the retry carries the answer as inputResponses.name',
);
check(retry?.requestState === 'ask_name', 'the retry echoes the requestState of the server');
const methods = session().map((message) => message.method);
check(!methods.includes('initialize'), `the session never sent initialize (${methods})`);
check(
  session().every((message) => message.method !== undefined && message.id !== undefined),
  'the session sent requests only (no response: the server sent no request on the modern path)',
);
await client.close();
check(errors.length === 0, `no error reached the client (${errors})`);

// A subclass of the transport is probed in place (the SDK clones only its base
// class): server/discover is then the first line of the one server process, which
// selects no path, and the request after it selects the modern path.
class InPlaceStdioClientTransport extends StdioClientTransport {}
const inPlace = new InPlaceStdioClientTransport({ command: server, args: [], stderr: 'pipe' });
const second = new Client(
  { name: 'interop-embedded-modern-in-place', version: '1.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);
await second.connect(inPlace);
check(second.getNegotiatedProtocolVersion() === '2026-07-28', 'in place: the client negotiated 2026-07-28');
check(textOf(await second.callTool({ name: 'echo', arguments: { text: 'again' } })) === 'again', 'in place: echo gives its text');
const lines = sent.filter((entry) => entry.transport === inPlace).map((entry) => entry.message.method);
check(
  lines.length === 2 && lines[0] === 'server/discover' && lines[1] === 'tools/call',
  `in place: one process got server/discover, then tools/call (${lines})`,
);
await second.close();

if (failures > 0) {
  console.log(`${failures} checks failed`);
  process.exit(1);
}
console.log('all checks passed');
