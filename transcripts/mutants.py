#!/usr/bin/env python3
"""The mutation score of the transcripts.

cargo-mutants lists the mutants of the bridge (`cargo mutants --list --json`);
this script tests each one against the conformance run alone, which cargo-mutants
cannot do by itself: its build step builds every test target of the mutated
package, and its test step runs `cargo test`, while the transcripts need only the
bridge executable. For each mutant, in the working tree it is started in:

1. the replacement is written into the source file, at the span cargo-mutants gives;
2. `cargo build -p mcp-bridge-vscode --bin mcp-bridge-vscode`: a failure makes the
   mutant *unviable* (it does not compile, so no test can see it);
3. `mcp-conformance run --fail-fast`: a failed transcript *catches* it (no other
   transcript starts after it), a clean run *misses* it,
   and a run past the time limit is a *timeout* (caught, as cargo-mutants counts it);
   the transcripts that fail run once more, one at a time, and only a second
   failure counts;
4. the file is restored.

With `--bridge-tests`, each missed mutant is tested again by the bridge package's
own tests (`cargo test -p mcp-bridge-vscode --lib --test in_process --test
stdio_processes --test url_upstream`), which tells whether anything in the
repository catches it.

The code of `bridge/src/embed/` (the feature `rmcp`) runs only inside
`bridge-embedded-server`: when the files of a run include it, every build is also
that executable's (the transcripts of M5 start it), so that no mutant's embedded
server outlives its mutant, and the bridge's tests are those of the library with
the feature and the embedded server's own.

`--same-as OUTCOMES` tests the mutants named in another run's outcomes file, by
their file, function and replacement (the line and column left out, since an edit
elsewhere in a file moves them): a sample measured again at another commit.
`--measured OUTCOMES...` leaves out the mutants those files name before the shard
is taken, so that the shards of a later commit test what no earlier run tested.

Run it from a checkout nobody edits (a git worktree), with its own target folder:
the files are changed while it runs. It takes about 20 s a mutant on 2 cores (the
bridge is built without optimization: see `cargo_env`).

    python3 transcripts/mutants.py --files 'bridge/src/notify/*.rs' --out /tmp/mutants
    python3 transcripts/mutants.py --files 'bridge/src/rules/*.rs' 'bridge/src/session/*.rs' \
        'bridge/src/notify/*.rs' --shard 0/8 --bridge-tests --out /tmp/mutants

Every outcome is appended to OUT/outcomes.jsonl as it comes, with the commit and
a hash of the unmutated source file's code (its test module left out), so that an
interrupted run can be resumed: `--resume` skips a mutant already there whose file's
code is still the same (a changed file's mutants are tested again, since its line
numbers and code moved). Keep OUT
in the repository (docs/mutants/) so that a run goes on from one machine to the
next; OUT/summary.md is the table for docs/conformance.md. While the file named by
`--pause-file` exists, no new mutant starts (a benchmark wants a quiet machine).
"""

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

BUILD_LIMIT_S = 1800
RUN_LIMIT_S = 300
# The bridge's tests take some 75 s here, their incremental build 10-60 s: a mutant
# that makes one of them hang is caught by its time limit, not by a 50-min wait.
BRIDGE_TESTS_LIMIT_S = 900


def list_mutants(files, excluded):
    command = ["cargo", "mutants", "--list", "--json", "-p", "mcp-bridge-vscode"]
    for pattern in files:
        command += ["-f", pattern]
    for pattern in excluded:
        command += ["--exclude-re", pattern]
    listed = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(listed.stdout)


def apply(mutant):
    """Writes the replacement over the mutant's span; returns the original text."""
    path = Path(mutant["file"])
    original = path.read_text()
    lines = original.splitlines(keepends=True)
    span = mutant["span"]
    start_line, start_col = span["start"]["line"], span["start"]["column"]
    end_line, end_col = span["end"]["line"], span["end"]["column"]
    # Spans are 1-based, in characters, the end exclusive.
    before = "".join(lines[: start_line - 1]) + lines[start_line - 1][: start_col - 1]
    after = lines[end_line - 1][end_col - 1 :] + "".join(lines[end_line:])
    path.write_text(before + mutant["replacement"] + after)
    return original


TEST_MODULE = "\n#[cfg(test)]\nmod tests {"


def code_hash(text):
    """The first 16 hex digits of the SHA-256 of a source file's code, without its
    test module: cargo-mutants does not mutate `#[cfg(test)]` code, so a change
    there moves no mutant and keeps the outcomes."""
    cut = text.find(TEST_MODULE)
    code = text if cut < 0 else text[:cut]
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def source_hash(file):
    """The hash of the file as it is (unmutated)."""
    return code_hash(Path(file).read_text())


def head_commit():
    return subprocess.run(
        ["git", "rev-parse", "--short=7", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def still_valid(outcome, hashes):
    """An outcome counts for a resumed run only if its file has not changed since."""
    return outcome.get("file_sha") == hashes.get(outcome["file"])


def settled(outcome, commit):
    """Whether a resumed run takes the outcome as it is: a mutant that the
    transcripts missed at another commit is tested again, since the transcripts
    may have grown since (a mutant caught stays caught)."""
    return outcome["outcome"] != "missed" or outcome.get("commit") == commit


def run(command, limit, env=None):
    """Runs `command` in a process group of its own: at the time limit the whole
    group goes (cargo, and the test executable or bridge that hangs under it),
    and the code is None."""
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=limit)
        return process.returncode, out, time.monotonic() - started
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        return None, out, time.monotonic() - started
    except BaseException:
        # A stop of the script (SIGTERM, Ctrl-C) takes the group with it.
        os.killpg(process.pid, signal.SIGKILL)
        raise


def cargo_env():
    """The dev profile without optimization and debug info for the workspace's
    crates (the dependencies keep theirs): a mutant's incremental build of the
    bridge takes some 5 s instead of a minute at the profile's opt-level 1, and the
    transcripts do not need the speed."""
    env = dict(os.environ)
    env["CARGO_PROFILE_DEV_OPT_LEVEL"] = "0"
    env["CARGO_PROFILE_DEV_DEBUG"] = "0"
    return env


EMBED = "bridge/src/embed/"


def build(with_embedded=False):
    """The bridge; with the code of embed/ under test, the embedded server too
    (only it compiles and runs that code)."""
    command = ["cargo", "build", "-p", "mcp-bridge-vscode", "--bin", "mcp-bridge-vscode"]
    if with_embedded:
        command += ["-p", "bridge-embedded-server", "--bin", "bridge-embedded-server"]
    return run(command, BUILD_LIMIT_S, cargo_env())


def build_runner():
    """The runner, the fixture and the embedded server of this commit: a runner
    built at another commit may not know the steps of today's transcripts, a
    fixture may not know their options, and every run would fail. (Started
    without Cargo, the runner builds nothing itself.)"""
    command = ["cargo", "build"]
    for package in ("mcp-conformance", "bridge-fixture-server", "bridge-embedded-server"):
        command += ["-p", package, "--bin", package]
    return run(command, BUILD_LIMIT_S, cargo_env())


def build_unmutated(with_embedded=False):
    """The runner and the bridge of the unmutated tree, before any mutant: the
    script stops with the build's output when either does not build."""
    code, output, _ = build_runner()
    if code != 0:
        sys.exit("the runner does not build:\n" + output[-3000:])
    code, output, _ = build(with_embedded)
    if code != 0:
        sys.exit("the unmutated bridge does not build:\n" + output[-3000:])


def conformance(first=()):
    """The whole run; the transcripts that fail run once more, alone, and only
    those that fail again count: a transcript of the sign-in with a real browser
    can miss its time limit on a loaded machine.

    The transcripts of `first` (those that caught the last mutants of the same
    file) run alone before it: the mutants of one function mostly fall to the
    same transcript, and a failure there is the same answer as a failure in the
    whole run, found in seconds."""
    env = dict(os.environ)
    env.pop("CARGO", None)

    def alone(path):
        return run(["target/debug/mcp-conformance", "run", path], RUN_LIMIT_S, env)

    seconds = 0.0

    def failed_again(paths):
        """Runs each failed transcript once more, alone: the first that fails again
        is the answer (no other runs after it); None when each passes."""
        nonlocal seconds
        for path in paths:
            again, output, more = alone(path)
            seconds += more
            if again != 0:
                return again, output, seconds
        return None

    for path in first:
        code, output, more = alone(path)
        seconds += more
        if code is None:
            return code, output, seconds
        if code != 0 and (answer := failed_again([path])):
            return answer
    # When each failure of the fail-fast run passes alone, that run stopped at a
    # transcript that misses its time on a loaded machine, before the others ran:
    # the whole run again, to its end.
    for flags in (["--fail-fast"], []):
        code, output, more = run(
            ["target/debug/mcp-conformance", "run", *flags], RUN_LIMIT_S, env
        )
        seconds += more
        failed = failed_transcripts(output)
        if code == 0 or code is None or not failed:
            return code, output, seconds
        if answer := failed_again(transcript_path(name) for name in failed):
            return answer
    return 0, output, seconds


def transcript_path(name):
    """The runner names a transcript by its path under transcripts/, or by its whole
    path when the file could not be read."""
    return name if os.path.isabs(name) else "transcripts/" + name


RECENT_CATCHERS = 3


def remember_catcher(catchers, outcome):
    """The transcript that caught a mutant goes first for the next of its file."""
    if outcome.get("outcome") != "caught" or not outcome.get("by"):
        return
    recent = catchers.setdefault(outcome["file"], [])
    path = outcome["by"][0]
    if path in recent:
        recent.remove(path)
    recent.insert(0, path)
    del recent[RECENT_CATCHERS:]


def failed_transcripts(output):
    return [
        line.split()[1]
        for line in output.splitlines()
        if line.startswith("FAILED ") and len(line.split()) > 1
    ]


def failed_tests(output):
    """The tests that cargo test reports as failed (`test NAME ... FAILED`)."""
    return [
        line.split()[1]
        for line in output.splitlines()
        if line.startswith("test ") and line.endswith(" ... FAILED")
    ]


def bridge_tests(with_embedded=False):
    """The bridge's own tests; for the code of embed/, the library's with the
    feature `rmcp` and the embedded server's (its interop and client tests)."""
    command = [
        "cargo", "test", "-p", "mcp-bridge-vscode", "--lib",
        "--test", "in_process", "--test", "stdio_processes", "--test", "url_upstream",
    ]
    if not with_embedded:
        return run(command, BRIDGE_TESTS_LIMIT_S, cargo_env())
    code, output, seconds = run(command + ["--features", "rmcp"], BRIDGE_TESTS_LIMIT_S, cargo_env())
    if code != 0:
        return code, output, seconds
    more = run(["cargo", "test", "-p", "bridge-embedded-server"], BRIDGE_TESTS_LIMIT_S, cargo_env())
    return more[0], more[1], seconds + more[2]


def test_one(mutant, with_bridge_tests, file_sha, commit, first=(), with_embedded=False):
    original = apply(mutant)
    try:
        code, output, build_s = build(with_embedded)
        outcome = {
            "name": mutant["name"],
            "file": mutant["file"],
            "file_sha": file_sha,
            "commit": commit,
            "build_s": round(build_s),
        }
        if code != 0:
            outcome["outcome"] = "unviable" if code is not None else "build timeout"
            return outcome
        code, output, run_s = conformance(first)
        outcome["run_s"] = round(run_s)
        if code is None:
            outcome["outcome"] = "timeout"
        elif code != 0:
            outcome["outcome"] = "caught"
            outcome["by"] = failed_transcripts(output)[:5]
        else:
            outcome["outcome"] = "missed"
            if with_bridge_tests:
                code, output, _ = bridge_tests(with_embedded)
                outcome["bridge_tests"] = (
                    "timeout" if code is None else "caught" if code != 0 else "missed"
                )
                if code:
                    # Which tests failed: a mutant that changes nothing the tests
                    # see, caught all the same, points to a test that fails alone.
                    outcome["bridge_failed"] = failed_tests(output)[:5]
        return outcome
    finally:
        Path(mutant["file"]).write_text(original)


def folder_of(file):
    parts = Path(file).parts
    return "/".join(parts[:3]) + "/" if len(parts) > 3 else file


ALSO_BRIDGE = "missed, caught by the bridge's tests"


def summary(outcomes, shard, total_listed):
    by_folder = defaultdict(Counter)
    for outcome in outcomes:
        by_folder[folder_of(outcome["file"])][outcome["outcome"]] += 1
        if "bridge_tests" in outcome:
            by_folder[folder_of(outcome["file"])][ALSO_BRIDGE] += (
                outcome["bridge_tests"] in ("caught", "timeout")
            )
    lines = [
        f"Mutants listed: {total_listed}; tested: {len(outcomes)} (shard {shard}).",
        "",
        "| folder | tested | caught | timeout | missed | unviable | score (caught+timeout)/(viable) | missed but caught by the bridge's tests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for folder in sorted(by_folder):
        c = by_folder[folder]
        viable = c["caught"] + c["timeout"] + c["missed"]
        score = f"{100 * (c['caught'] + c['timeout']) / viable:.0f}%" if viable else "-"
        lines.append(
            f"| `{folder}` | {sum(c[k] for k in ('caught', 'timeout', 'missed', 'unviable', 'build timeout'))} "
            f"| {c['caught']} | {c['timeout']} | {c['missed']} | {c['unviable']} | {score} "
            f"| {c[ALSO_BRIDGE]} |"
        )
    lines += ["", "Missed:", ""]
    for outcome in outcomes:
        if outcome["outcome"] == "missed":
            extra = f" (the bridge's tests: {outcome['bridge_tests']})" if "bridge_tests" in outcome else ""
            lines.append(f"- `{outcome['name']}`{extra}")
    return "\n".join(lines) + "\n"


def without_place(name):
    """A mutant's name without its line and column: `file: replacement in function`
    (cargo-mutants names a mutant `file:line:column: replacement`)."""
    head, sep, rest = name.partition(": ")
    return head.split(":")[0] + sep + rest


def named_in(mutants, records):
    """The indexes of the mutants of `mutants` that `records` (outcomes files) name,
    each as many times as one of them names it (two runs of the same mutant are
    one): by its whole name where the place is unchanged, else by its file,
    function and replacement (code above it moved)."""
    exact = Counter()
    for record in records:
        exact |= Counter(json.loads(line)["name"] for line in record.read_text().splitlines())
    chosen = set()
    for index, mutant in enumerate(mutants):
        if exact[mutant["name"]] > 0:
            exact[mutant["name"]] -= 1
            chosen.add(index)
    moved = Counter(without_place(name) for name in exact.elements())
    for index, mutant in enumerate(mutants):
        key = without_place(mutant["name"])
        if index not in chosen and moved[key] > 0:
            moved[key] -= 1
            chosen.add(index)
    missing = sum(moved.values())
    if missing:
        print(f"{missing} mutants of {', '.join(map(str, records))} are not listed any more", flush=True)
    return chosen


def same_as(mutants, record):
    """The mutants that `record` names: a sample measured again at another commit."""
    chosen = named_in(mutants, [record])
    return [mutant for index, mutant in enumerate(mutants) if index in chosen]


def not_measured(mutants, records):
    """The mutants that no outcomes file of `records` names. Sharding what is left
    keeps the shards apart even though the list moves between commits: every N-th
    mutant of a list with new or deleted mutants picks others than it did before."""
    measured = named_in(mutants, records)
    return [mutant for index, mutant in enumerate(mutants) if index not in measured]


def main():
    # A stop (kill, Ctrl-C) ends inside `test_one`, whose `finally` restores the file.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", required=True, help="globs of source files")
    parser.add_argument("--shard", default="0/1", help="K/N: every N-th mutant from the K-th")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--bridge-tests", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--pause-file", type=Path, help="no mutant starts while it exists")
    parser.add_argument(
        "--same-as",
        type=Path,
        help="the mutants of this outcomes file (by file, function and replacement), not a shard",
    )
    parser.add_argument(
        "--exclude-re",
        nargs="*",
        default=[],
        help="regexes of mutant names to leave out (cargo mutants --exclude-re)",
    )
    parser.add_argument(
        "--measured",
        nargs="*",
        type=Path,
        default=[],
        help="outcomes files whose mutants are left out before the shard is taken",
    )
    args = parser.parse_args()
    k, n = (int(part) for part in args.shard.split("/"))
    mutants = not_measured(list_mutants(args.files, args.exclude_re), args.measured)
    if args.same_as:
        chosen = same_as(mutants, args.same_as)
    else:
        chosen = [m for index, m in enumerate(mutants) if index % n == k]
    with_embedded = any(m["file"].startswith(EMBED) for m in chosen)
    args.out.mkdir(parents=True, exist_ok=True)
    record = args.out / "outcomes.jsonl"
    hashes = {file: source_hash(file) for file in {m["file"] for m in chosen}}
    commit = head_commit()
    done = {}
    if args.resume and record.exists():
        kept = []
        for line in record.read_text().splitlines():
            outcome = json.loads(line)
            current = still_valid(outcome, hashes) and settled(outcome, commit)
            if current:
                done[outcome["name"]] = outcome
            if outcome["file"] not in hashes or current:
                kept.append(line)
        # The outcomes that are tested again leave the record.
        record.write_text("".join(line + "\n" for line in kept))
    elif record.exists():
        record.unlink()
    build_unmutated(with_embedded)
    code, output, _ = conformance()
    if code != 0:
        sys.exit("the conformance run fails on the unmutated bridge:\n" + output[-3000:])
    # A test that fails without a mutant (the SDKs of interop/ not installed in this
    # checkout, say) would count every missed mutant as caught by the bridge's tests.
    if args.bridge_tests:
        code, output, _ = bridge_tests(with_embedded)
        if code != 0:
            sys.exit(
                "the bridge's tests fail on the unmutated bridge (npm ci --prefix interop?):\n"
                + output[-3000:]
            )
    outcomes = [done[m["name"]] for m in chosen if m["name"] in done]
    catchers = {}
    for outcome in outcomes:
        remember_catcher(catchers, outcome)
    for number, mutant in enumerate(chosen, 1):
        if mutant["name"] in done:
            continue
        while args.pause_file and args.pause_file.exists():
            time.sleep(5)
        outcome = test_one(
            mutant,
            args.bridge_tests,
            hashes[mutant["file"]],
            commit,
            catchers.get(mutant["file"], []),
            with_embedded,
        )
        remember_catcher(catchers, outcome)
        outcomes.append(outcome)
        with record.open("a") as out:
            out.write(json.dumps(outcome) + "\n")
        print(f"[{number}/{len(chosen)}] {outcome['outcome']}: {mutant['name']}", flush=True)
        (args.out / "summary.md").write_text(summary(outcomes, args.shard, len(mutants)))
    # The tree is restored: build the bridge it holds again.
    build(with_embedded)
    (args.out / "summary.md").write_text(summary(outcomes, args.shard, len(mutants)))
    print((args.out / "summary.md").read_text())


if __name__ == "__main__":
    main()
