#!/usr/bin/env node
// The command of an npm package of mcp-bridge-rs (mcp-bridge-vscode,
// bridge-fixture-server): runs the executable of the platform package that npm
// installed next to it (one optional dependency per os and cpu; npm skips the
// others) and passes everything through. The executable is a stdio server, so this
// file writes nothing to stdout: stdin, stdout and stderr are the child's own (it
// inherits them), its exit code is ours, a signal that kills it kills us, and the
// stop signals that reach us reach it. No dependency, no install script.
'use strict';

const { spawn } = require('node:child_process');

const name = require('./package.json').name;
const platform = `${process.platform}-${process.arch}`;
const platformPackage = `@mcp-bridge-rs/${name}-${platform}`;
const executableName = process.platform === 'win32' ? `${name}.exe` : name;

let executable;
try {
  executable = require.resolve(`${platformPackage}/bin/${executableName}`);
} catch {
  // Code 1, as the bridge's own for a failure that is not in the arguments (2 means
  // arguments that are not valid): the arguments may be fine, the install is not.
  process.stderr.write(
    `${name}: error: no executable of ${name} for ${platform}: the package ${platformPackage} is not installed. ` +
      'Packages exist for linux-x64, linux-arm64, darwin-x64, darwin-arm64 and win32-x64; ' +
      'npm installs the one of this platform unless optional dependencies are omitted ' +
      '(--omit=optional, --no-optional) or the package-lock.json came from another platform.\n',
  );
  process.exit(1);
}

const child = spawn(executable, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

// The stops of VS Code (SIGTERM), of a terminal (SIGINT) and of a closed session
// (SIGHUP) go to the child; we exit when it does, with its code or its signal.
const forwarded = ['SIGTERM', 'SIGINT', 'SIGHUP'];
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}

child.on('error', (error) => {
  process.stderr.write(`${name}: error: cannot start ${executable}: ${error.message}\n`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  if (signal === null) {
    process.exit(code);
  }
  // Die of the same signal, so that our parent sees what the child's parent would
  // have seen: without our handler the signal has its default action again.
  for (const stop of forwarded) process.removeAllListeners(stop);
  process.kill(process.pid, signal);
  // A signal whose default action is not to die (or Windows): report it as a shell would.
  process.exit(128 + (require('node:os').constants.signals[signal] ?? 0));
});
