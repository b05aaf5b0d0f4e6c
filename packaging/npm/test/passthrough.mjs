// Checks that the launcher of the npm package passes everything through, against the
// bare executable (script/checks/30-npm-registry runs it on the installed packages):
//
//   node passthrough.mjs <launcher.js of the installed package> <bare mcp-bridge-vscode> <bridge-fixture-server>
//
// It runs the launcher as `node launcher.js` (the command of a global install of
// mcp-bridge-vscode, and of package managers other than npm, which links the platform
// package's command, the executable itself, in a project and under npx).
//
// - stdout, stderr and the exit code of --version (0), --help (0) and of arguments that
//   are not valid (2) are byte for byte those of the bare executable;
// - in a session, stdout carries only the bridge's JSON-RPC lines (the first byte is
//   the `{` of the initialize result; every line parses);
// - SIGTERM, SIGINT and SIGHUP sent to the launcher alone reach the bridge: the bridge
//   dies of the signal, its upstream stops, and the launcher dies of the same signal.
//
// Exit code 0 when every check passed; 1 with the failed checks.

import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const [launcher, bare, fixture] = process.argv.slice(2);
if (!launcher || !bare || !fixture) {
  console.error('usage: node passthrough.mjs <launcher.js> <mcp-bridge-vscode> <bridge-fixture-server>');
  process.exit(2);
}

/** `node launcher.js ARGS`. */
function spawnLauncher(args, stdio) {
  return spawn(process.execPath, [launcher, ...args], { stdio });
}

let failures = 0;
function check(condition, what) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${what}`);
  if (!condition) failures += 1;
}

/** Runs a command to its end with stdin closed: its stdout and stderr bytes and its exit. */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = command === launcher ? spawnLauncher(args, ['ignore', 'pipe', 'pipe']) : spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), code, signal }));
  });
}

for (const args of [['--version'], ['--help'], ['--no-such-option']]) {
  const [through, direct] = [await run(launcher, args), await run(bare, args)];
  const what = `mcp-bridge-vscode ${args.join(' ')}`;
  check(through.stdout.equals(direct.stdout), `${what}: the same stdout (${through.stdout.length} bytes)`);
  check(through.stderr.equals(direct.stderr), `${what}: the same stderr (${through.stderr.length} bytes)`);
  check(through.code === direct.code && through.signal === null,
    `${what}: the same exit code (${through.code}, the executable's ${direct.code})`);
}

/** The processes whose parent is `pid` (Linux: /proc). */
function childrenOf(pid) {
  const children = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const path = `/proc/${pid}/task/${task}/children`;
    if (existsSync(path)) children.push(...readFileSync(path, 'utf8').split(' ').filter(Boolean).map(Number));
  }
  return children;
}

/** A live process (not a zombie). */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function waitFor(predicate, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return predicate();
}

/**
 * A session through the launcher up to the initialize result; then `signal` to the
 * launcher alone. Its stdin is a FIFO that this process holds open (read and write),
 * so that it never ends: Node closes a child's stdin pipe when the child exits, and the
 * bridge would then stop at the end of stdin even if the signal never reached it.
 */
async function session(signal) {
  const fifo = join(mkdtempSync(join(tmpdir(), 'passthrough-')), 'stdin');
  execFileSync('mkfifo', [fifo]);
  const stdin = openSync(fifo, 'r+');
  const child = spawnLauncher(['--', fixture], [stdin, 'pipe', 'pipe']);
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, signal: sig })));
  let stdout = Buffer.alloc(0);
  child.stdout.on('data', (chunk) => { stdout = Buffer.concat([stdout, chunk]); });
  child.stderr.resume();
  writeSync(stdin, `${JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'passthrough', version: '1' } },
  })}\n`);
  const answered = await waitFor(() => stdout.includes('\n'), 20_000);
  check(answered, `${signal}: the initialize result came through the launcher`);
  const lines = stdout.toString('utf8').split('\n').filter(Boolean);
  check(stdout[0] === 0x7b && lines.every((line) => { try { JSON.parse(line); return true; } catch { return false; } }),
    `${signal}: stdout holds only the bridge's JSON-RPC lines`);
  check(JSON.parse(lines[0] ?? '{}').result?.serverInfo?.name === 'bridge-fixture-server', `${signal}: the result names the fixture`);

  const [bridge] = childrenOf(child.pid);
  const [upstream] = bridge ? childrenOf(bridge) : [];
  check(bridge !== undefined && upstream !== undefined, `${signal}: the launcher ${child.pid} runs the bridge ${bridge}, which runs the fixture ${upstream}`);
  process.kill(child.pid, signal);
  const exit = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(null), 10_000))]);
  check(exit?.signal === signal, `${signal}: the launcher died of ${exit?.signal ?? `exit code ${exit?.code}`}`);
  check(bridge !== undefined && await waitFor(() => !alive(bridge), 5000), `${signal}: the bridge stopped`);
  check(upstream !== undefined && await waitFor(() => !alive(upstream), 5000), `${signal}: the fixture stopped`);
  // What a failed check left running must not outlive the check (stdin never ends).
  for (const pid of [child.pid, bridge, upstream]) {
    if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
  }
  closeSync(stdin);
  rmSync(dirname(fifo), { recursive: true, force: true });
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) await session(signal);

if (failures > 0) {
  console.log(`${failures} checks failed`);
  process.exit(1);
}
console.log('all checks passed');
