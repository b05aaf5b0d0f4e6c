// Lays out the npm packages of one platform, ready for `npm pack` (script/dist/npm-pack
// calls it):
//
//   node packaging/npm/stage.mjs --version V --platform OS-CPU --bin-dir DIR --stage DIR
//
// For each tool (mcp-bridge-vscode, bridge-fixture-server) it writes STAGE/<tool>/, the
// main package (the launcher and the package.json of packaging/npm/<tool>/ with every
// version set to V), and STAGE/<tool>-<OS-CPU>/, the platform package: the executable
// of DIR as bin/<tool>[.exe], with `os` and `cpu` so that npm installs it only there,
// and a `bin` that is the executable itself (`npm install -g` of the platform package
// gives a command with no Node in between).

import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const TOOLS = ['mcp-bridge-vscode', 'bridge-fixture-server'];
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

const { values } = parseArgs({
  options: {
    version: { type: 'string' },
    platform: { type: 'string' },
    'bin-dir': { type: 'string' },
    stage: { type: 'string' },
  },
});
for (const option of ['version', 'platform', 'bin-dir', 'stage']) {
  if (!values[option]) fail(`--${option} is missing`);
}
if (!PLATFORMS.includes(values.platform)) {
  fail(`no npm package for the platform ${values.platform} (one of ${PLATFORMS.join(', ')})`);
}
const [os, cpu] = values.platform.split('-');

rmSync(values.stage, { recursive: true, force: true });
for (const tool of TOOLS) {
  const main = JSON.parse(readFileSync(join(here, tool, 'package.json'), 'utf8'));
  main.version = values.version;
  for (const dependency of Object.keys(main.optionalDependencies)) {
    main.optionalDependencies[dependency] = values.version;
  }
  const expected = PLATFORMS.map((platform) => `@mcp-bridge-rs/${tool}-${platform}`).sort();
  if (JSON.stringify(Object.keys(main.optionalDependencies).sort()) !== JSON.stringify(expected)) {
    fail(`packaging/npm/${tool}/package.json must name exactly the platform packages ${expected.join(', ')}`);
  }
  const mainDir = join(values.stage, tool);
  mkdirSync(mainDir, { recursive: true });
  writeJson(join(mainDir, 'package.json'), main);
  copyFileSync(join(here, 'launcher.js'), join(mainDir, 'launcher.js'));
  chmodSync(join(mainDir, 'launcher.js'), 0o755);
  copyFileSync(join(here, tool, 'README.md'), join(mainDir, 'README.md'));

  const executable = os === 'win32' ? `${tool}.exe` : tool;
  const platformName = `@mcp-bridge-rs/${tool}-${values.platform}`;
  const platformDir = join(values.stage, `${tool}-${values.platform}`);
  mkdirSync(join(platformDir, 'bin'), { recursive: true });
  copyFileSync(join(values['bin-dir'], executable), join(platformDir, 'bin', executable));
  chmodSync(join(platformDir, 'bin', executable), 0o755);
  writeJson(join(platformDir, 'package.json'), {
    name: platformName,
    version: values.version,
    description: `The ${tool} executable for ${values.platform}, the platform package of the npm package ${tool}.`,
    license: main.license,
    homepage: main.homepage,
    repository: main.repository,
    os: [os],
    cpu: [cpu],
    bin: { [tool]: `bin/${executable}` },
    files: [`bin/${executable}`],
    preferUnplugged: true,
  });
  writeFileSync(
    join(platformDir, 'README.md'),
    `# ${platformName}\n\nThe \`${tool}\` executable for ${values.platform}. Install \`${tool}\`, which picks the ` +
      `package of its platform; or install this package globally (\`npm install -g ${platformName}\`) for a ` +
      `\`${tool}\` command that is the executable itself, with no Node.js in between. See ` +
      `${main.homepage}.\n`,
  );
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function fail(message) {
  console.error(`stage.mjs: error: ${message}`);
  process.exit(2);
}
