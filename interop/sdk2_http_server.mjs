// The official TypeScript SDK 2.x as an MCP server of revision 2026-07-28 over
// Streamable HTTP on loopback (@modelcontextprotocol/server with the Node HTTP adapter
// of @modelcontextprotocol/node), as an upstream of the bridge's URL form.
//
//   node sdk2_http_server.mjs
//
// Tools: `echo` (gives its text) and `ask_name` (asks for a name with an
// InputRequiredResult, a form elicitation, then greets). 2025-era requests are
// refused (`legacy: 'reject'`): the bridge must speak 2026-07-28. Stdout gets one line,
// `listening <url>`; stderr one line per JSON-RPC method received, `method <name>`.
// It stops at the end of its stdin.

import { createServer } from 'node:http';
import { McpServer, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

function factory() {
  const server = new McpServer({ name: 'sdk2-interop-server', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Gives its text back', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'ask_name',
    { description: 'Asks for a name, then greets', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'name');
      if (answer.kind === 'elicit') {
        const text = answer.action === 'accept' ? `Hello, ${answer.content?.name}!` : `no name: ${answer.action}`;
        return { content: [{ type: 'text', text }] };
      }
      return inputRequired({
        inputRequests: {
          name: inputRequired.elicit({
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          }),
        },
      });
    },
  );
  return server;
}

const handler = toNodeHandler(createMcpHandler(factory, {
  legacy: 'reject',
  onerror: (error) => console.error(`error ${error.message}`),
}));
const validateHost = localhostHostValidation();
const validateOrigin = localhostOriginValidation();

const http = createServer(async (req, res) => {
  if (!validateHost(req, res) || !validateOrigin(req, res)) return;
  if (req.method !== 'POST') {
    await handler(req, res);
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  let body;
  try {
    body = JSON.parse(text);
    console.error(`method ${body.method ?? '(response)'}`);
  } catch {
    body = undefined;
  }
  await handler(req, res, body);
});

http.listen(0, '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${http.address().port}/mcp`);
});
process.stdin.resume();
process.stdin.on('end', () => {
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
