// The HTTP front of the official conformance suite: the suite
// speaks Streamable HTTP only, the bridge speaks stdio. This front is the official
// TypeScript SDK 1.x's Streamable HTTP server transport, one per MCP session, and
// for each session one bridge process:
//
//   node suite_front.mjs <mcp-bridge-vscode> <bridge-fixture-server>
//
// starts `mcp-bridge-vscode -- bridge-fixture-server --profile conformance` for each
// new session and only relays: every JSON-RPC message the suite posts goes to the
// bridge's stdin as it came out of the transport, every line of the bridge's stdout
// goes back on that session unchanged (responses, notifications, and the bridge's
// own requests such as elicitation/create and sampling/createMessage). The front
// answers nothing by itself: no MCP method is handled here.
//
// The HTTP side is the SDK's: `createMcpExpressApp()` on 127.0.0.1 puts the SDK's
// Host-header check (DNS-rebinding protection: localhost, 127.0.0.1, [::1]) in front
// of every request, and the transport runs stateful sessions (Mcp-Session-Id), with
// an event store so that each SSE stream starts with a priming event and can be
// resumed with Last-Event-ID.
//
// On stdout the front writes one line, `listening http://127.0.0.1:<port>/mcp`, when
// it accepts connections; everything else (the bridges' stderr, relay errors) goes
// to stderr. DELETE of a session ends its bridge's stdin. At the end of the front's
// stdin, or at SIGTERM/SIGINT, it closes every session, waits for the bridges to
// exit and exits 0; 1 if a bridge exited with an error, wrote a line that is not
// JSON, a message could not be relayed, or the transport reported an error (a
// request it refused, such as a message that is not valid JSON-RPC).

import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [bridgeExe, fixtureExe] = process.argv.slice(2);
if (!bridgeExe || !fixtureExe) {
  console.error('usage: node suite_front.mjs <mcp-bridge-vscode> <bridge-fixture-server>');
  process.exit(2);
}
const bridgeArgs = ['--', fixtureExe, '--profile', 'conformance'];

// SUITE_FRONT_TRACE=<file> appends every relayed message to <file>, one JSON line
// each: {"session", "to": "bridge" | "suite", "message"}; for reading a run.
const tracePath = process.env.SUITE_FRONT_TRACE;
function trace(session, to, message) {
  if (tracePath) {
    appendFileSync(tracePath, `${JSON.stringify({ session, to, message })}\n`);
  }
}

let failed = false;
function log(line) {
  process.stderr.write(`front: ${line}\n`);
}

/**
 * An event store for the transport's resumability: the SSE priming event, the
 * event ids, and the replay after Last-Event-ID. It stores the relayed messages as
 * they are; it never builds one.
 */
class EventStore {
  constructor() {
    this.events = []; // { eventId, streamId, message }, in order
    this.next = 0;
  }

  async storeEvent(streamId, message) {
    const eventId = `${++this.next}`;
    this.events.push({ eventId, streamId, message });
    return eventId;
  }

  async getStreamIdForEventId(eventId) {
    return this.events.find((event) => event.eventId === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId, { send }) {
    const at = this.events.findIndex((event) => event.eventId === lastEventId);
    if (at < 0) {
      throw new Error(`unknown Last-Event-ID ${lastEventId}`);
    }
    const { streamId } = this.events[at];
    for (const event of this.events.slice(at + 1)) {
      // Priming events store {} and carry no message to replay.
      if (event.streamId === streamId && Object.keys(event.message).length > 0) {
        await send(event.eventId, event.message);
      }
    }
    return streamId;
  }
}

/**
 * One MCP session: its transport and its bridge process. The bridge's messages
 * are routed to the HTTP stream they belong to; their content is never touched.
 */
class Session {
  constructor() {
    this.inFlight = new Map(); // JSON-RPC id of a suite request -> its progress token
    this.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new EventStore(),
      retryInterval: 1000,
      onsessioninitialized: (id) => {
        this.id = id;
        sessions.set(id, this);
      },
      onsessionclosed: (id) => log(`session ${id} closed by the client`),
    });
    this.transport.onmessage = (message) => this.toBridge(message);
    this.transport.onerror = (error) => {
      failed = true;
      log(`session ${this.id ?? '(new)'}: transport: ${error.message}`);
    };
    this.transport.onclose = () => {
      sessions.delete(this.id);
      this.bridge.stdin.end();
    };

    this.bridge = spawn(bridgeExe, bridgeArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => {
      this.bridge.on('exit', (code, signal) => {
        if (code !== 0) {
          failed = true;
          log(`session ${this.id}: the bridge exited with ${code ?? signal}`);
        }
        this.transport.close().catch(() => {});
        resolve();
      });
    });
    this.bridge.on('error', (error) => {
      failed = true;
      log(`session ${this.id}: cannot start the bridge: ${error.message}`);
    });
    this.bridge.stdin.on('error', (error) => log(`session ${this.id}: bridge stdin: ${error.message}`));
    createInterface({ input: this.bridge.stderr, crlfDelay: Infinity }).on('line', (line) =>
      process.stderr.write(`bridge ${this.id ?? '(new)'}: ${line}\n`),
    );
    createInterface({ input: this.bridge.stdout, crlfDelay: Infinity }).on('line', (line) =>
      this.fromBridge(line),
    );
  }

  /** A message of the suite: to the bridge's stdin, as the transport gave it. */
  toBridge(message) {
    if ('method' in message && 'id' in message) {
      this.inFlight.set(message.id, message.params?._meta?.progressToken);
    } else if (message.method === 'notifications/cancelled') {
      // A cancelled request may get no response: it is no longer in flight.
      this.inFlight.delete(message.params?.requestId);
    }
    trace(this.id, 'bridge', message);
    this.bridge.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** A line of the bridge's stdout: back to the suite on the stream it belongs to. */
  fromBridge(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      failed = true;
      log(`session ${this.id}: the bridge wrote a line that is not JSON: ${line.slice(0, 200)}`);
      return;
    }
    trace(this.id, 'suite', message);
    const isResponse = !('method' in message);
    if (isResponse) {
      this.inFlight.delete(message.id);
    }
    const relatedRequestId = isResponse ? undefined : this.relatedRequest(message);
    this.transport.send(message, { relatedRequestId }).catch((error) => {
      failed = true;
      log(`session ${this.id}: cannot relay ${line.slice(0, 200)}: ${error.message}`);
    });
  }

  /**
   * The suite request a message of the bridge belongs to, for the transport to put
   * it on that request's SSE stream (the spec: messages related to a request go on
   * its stream; unrelated ones on the GET stream). A progress notification belongs
   * to the request with its token; list changes and resource updates belong to none;
   * anything else sent while requests are in flight (a log message, elicitation or
   * sampling during a tool call) belongs to the latest of them.
   */
  relatedRequest(message) {
    if (message.method === 'notifications/progress') {
      for (const [id, token] of this.inFlight) {
        if (token !== undefined && token === message.params?.progressToken) {
          return id;
        }
      }
    }
    if (message.method.endsWith('/list_changed') || message.method === 'notifications/resources/updated') {
      return undefined;
    }
    return [...this.inFlight.keys()].at(-1);
  }
}

const sessions = new Map();
const started = new Set(); // every session ever started, for the end

const app = createMcpExpressApp({ host: '127.0.0.1' });
app.all('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  let session;
  if (typeof sessionId === 'string') {
    session = sessions.get(sessionId);
    if (!session) {
      res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
      return;
    }
  } else if (req.method === 'POST' && isInitializeRequest(req.body)) {
    session = new Session();
    started.add(session);
  } else {
    res.status(400).json({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Bad Request: no Mcp-Session-Id and not an initialize request' },
      id: null,
    });
    return;
  }
  try {
    await session.transport.handleRequest(req, res, req.body);
  } catch (error) {
    failed = true;
    log(`session ${session.id}: ${error.message}`);
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
    }
  }
  if (session.transport.sessionId === undefined) {
    // The transport refused the initialize: no session, so no bridge.
    await session.transport.close();
  }
});

const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`);
});

let ending = false;
async function end(why) {
  if (ending) return;
  ending = true;
  log(`ending (${why}): ${started.size} session(s) served`);
  server.close();
  server.closeAllConnections?.();
  await Promise.all([...started].map(async (session) => {
    await session.transport.close().catch(() => {});
    session.bridge.stdin.end();
    await session.exited;
  }));
  process.exit(failed ? 1 : 0);
}
process.stdin.on('end', () => end('end of stdin'));
process.stdin.resume();
process.on('SIGTERM', () => end('SIGTERM'));
process.on('SIGINT', () => end('SIGINT'));
