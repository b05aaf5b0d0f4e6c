// The official TypeScript SDK 1.x as a client of revision 2025-11-25 (as VS Code) in
// front of mcp-bridge-vscode in its URL form, in front of an MCP server of revision
// 2026-07-28 at a URL: list, call, and a tool that asks for input.
//
//   node url_client.mjs <mcp-bridge-vscode> <url>
//
// The server is sdk2_http_server.mjs (the official TypeScript SDK 2.x). The client
// answers the form elicitation that the bridge makes of the server's
// InputRequiredResult with {name: "Ada"}. Exit code 0 when every check passed; 1 with
// the failed checks.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [bridge, url] = process.argv.slice(2);
if (!bridge || !url) {
  console.error('usage: node url_client.mjs <mcp-bridge-vscode> <url>');
  process.exit(2);
}

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${what}`);
  if (!condition) failures += 1;
}

const timer = setTimeout(() => { console.log('FAIL the run took more than 60 s'); process.exit(1); }, 60_000);

const transport = new StdioClientTransport({ command: bridge, args: [url], stderr: 'pipe' });
let stderr = '';
transport.stderr?.on('data', (chunk) => { stderr += chunk; });
const client = new Client(
  { name: 'interop-url', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } } },
);
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return { action: 'accept', content: { name: 'Ada' } };
});

await client.connect(transport);
check(client.getServerVersion()?.name === 'sdk2-interop-server', `serverInfo names the SDK 2.x server (${client.getServerVersion()?.name})`);
check(client.getServerCapabilities()?.tools !== undefined, 'initialize declares tools');

const { tools } = await client.listTools();
const names = tools.map((tool) => tool.name).sort();
check(JSON.stringify(names) === '["ask_name","echo"]', `tools/list gives echo and ask_name (${names})`);
const echoTool = tools.find((tool) => tool.name === 'echo');
check(echoTool?.inputSchema?.properties?.text?.type === 'string', 'the input schema of echo has its string text');

const textOf = (result) => result?.content?.find((block) => block.type === 'text')?.text;
const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hello over HTTP' } });
check(textOf(echoed) === 'hello over HTTP' && !echoed.isError, `echo gives its text (${textOf(echoed)})`);

const greeted = await client.callTool({ name: 'ask_name', arguments: {} });
check(textOf(greeted) === 'Hello, Ada!', `ask_name: the form round, answered by the client (${textOf(greeted)})`);
check(elicitations.length === 1 && elicitations[0].message === 'What is your name?'
  && elicitations[0].requestedSchema?.properties?.name?.type === 'string',
  `one form elicitation reached the client (${JSON.stringify(elicitations)})`);

const refused = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((error) => ({ error }));
check(refused.error !== undefined || refused.isError === true, 'an unknown tool is refused, and the bridge serves on');
const again = await client.callTool({ name: 'echo', arguments: { text: 'again' } });
check(textOf(again) === 'again', 'the next call works');

// The SDK's close ends the bridge's stdin and waits for its exit (SIGTERM after 2 s).
const child = transport._process;
const exitedPromise = new Promise((resolve) => {
  if (child.exitCode !== null) resolve({ code: child.exitCode, signal: null, at: Date.now() });
  else child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
});
const closedAt = Date.now();
await client.close();
const exited = await exitedPromise;
check(exited.code === 0, `the bridge exits with code ${exited.code} (signal ${exited.signal}) at the end of its stdin`);
check(exited.at - closedAt < 2000, `the bridge stops ${exited.at - closedAt} ms after the close`);
// By the level word of each line: an info line may quote an error of a library.
check(!/^mcp-bridge-vscode: [a-z_]+: (warning|error): /m.test(stderr), 'no warning or error line from the bridge');

clearTimeout(timer);
if (failures > 0) {
  console.log(`${failures} checks failed. stderr of the bridge:\n${stderr}`);
  process.exit(1);
}
console.log('all checks passed');
