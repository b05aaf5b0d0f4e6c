// The official TypeScript SDK 1.x as a client of revision 2025-11-25 in front of
// bridge-embedded-server: its initialize selects the bridge inside the server, which
// does the input round of ask_name for it (M5).
//
//   node embedded_stdio_client.mjs <bridge-embedded-server>
//
// Exit code 0 when every check passed; 1 with the failed check.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [server] = process.argv.slice(2);
if (!server) {
  console.error('usage: node embedded_stdio_client.mjs <bridge-embedded-server>');
  process.exit(2);
}

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${what}`);
  if (!condition) failures += 1;
}

const transport = new StdioClientTransport({ command: server, args: [], stderr: 'pipe' });
const client = new Client(
  { name: 'interop-embedded', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } } },
);
const questions = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push(request.params);
  return { action: 'accept', content: { name: 'Ada' } };
});

await client.connect(transport);
check(client.getServerVersion()?.name === 'bridge-embedded-server', 'the server names itself');
const tools = (await client.listTools()).tools.map((tool) => tool.name);
check(['echo', 'add', 'ask_name'].every((name) => tools.includes(name)), `the tools are listed (${tools})`);
const textOf = (result) => result.content?.[0]?.text;
check(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) === 'hello', 'echo gives its text');
check(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) === '5', 'add 2 3 gives 5');
check(textOf(await client.callTool({ name: 'ask_name', arguments: {} })) === 'Hello, Ada.', 'ask_name greets after the elicitation');
check(questions.length === 1 && questions[0].message === 'Your name?', 'one elicitation reached the client');
await client.close();

if (failures > 0) {
  console.log(`${failures} checks failed`);
  process.exit(1);
}
console.log('all checks passed');
