#!/usr/bin/env python3
"""The hand-written mutants: each rule missing or different at one place.

cargo-mutants writes a body replaced by a default or an operator flipped; the
bug it cannot write is a rule that holds where it was first written and is
missing, or slightly different, at another place where it applies. Those are
written by hand in `transcripts/hand-mutants/<table>.json`, one file for each
table of docs/conformance.md "Each rule at each place it applies" (the format:
transcripts/README.md, "The hand-written mutants"). For each mutant, in the
working tree it is started in (the functions are those of `mutants.py`):

1. its `find` must occur exactly once in its `file` (else the mutant is *stale*:
   the code moved and the mutant must be written again); it is replaced by
   `replace`;
2. the bridge is built, and for a file of `bridge/src/embed/` the embedded
   server too; a failure makes the mutant *unviable*;
3. the transcripts of its `caught_by` run alone, each of them (the first failure
   runs once more, and only a second one counts); when none of them fails, the whole
   conformance run with `--fail-fast`, so that "caught by the transcripts alone"
   is the whole run's answer; a named transcript that does not fail is listed in
   the summary (a wrong `caught_by` is a finding);
4. when the transcripts miss it, its `cargo_tests` (each a filter of `cargo
   test`), or without them the bridge's tests as `mutants.py --bridge-tests`
   runs them;
5. the file is restored (and the embedded server built again after a mutant
   of embed/, so that no mutated one outlives its mutant).

    python3 transcripts/hand_mutants.py --out docs/mutants/hand --resume
    python3 transcripts/hand_mutants.py --out /tmp/hand --only secrets-state-in-debug-line

Every outcome is appended to OUT/outcomes.jsonl as it comes, with the commit, a
hash of the mutant and one of its file's code: `--resume` skips a mutant whose
outcome is there and whose mutant and file are unchanged (a mutant that the
transcripts and tests missed is tested again at a new commit). OUT/summary.md
is the table for docs/conformance.md. While the file of `--pause-file` exists,
no new mutant starts.
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutants import (  # noqa: E402  (the folder of this script is on the path first)
    BRIDGE_TESTS_LIMIT_S,
    EMBED,
    RUN_LIMIT_S,
    bridge_tests,
    build,
    build_unmutated,
    cargo_env,
    code_hash,
    conformance,
    failed_tests,
    failed_transcripts,
    head_commit,
    run,
    transcript_path,
)

HAND_MUTANTS = Path("transcripts/hand-mutants")


def load_mutants(folder):
    """Every mutant of every file of `folder`, in the order of the files' names."""
    mutants = []
    for path in sorted(folder.glob("*.json")):
        for mutant in json.loads(path.read_text()):
            mutant["table"] = path.stem
            mutants.append(mutant)
    return mutants


def mutant_hash(mutant):
    """The hash of what a mutant is and what it names: an edit of any of it tests
    it again."""
    keys = ("file", "find", "replace", "caught_by", "cargo_tests")
    text = json.dumps({key: mutant.get(key) for key in keys}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def folder_of(file):
    """The folder of the score: the first folder under bridge/src/, or the file's
    name for a file directly there."""
    parts = Path(file).parts
    if len(parts) > 3 and parts[:2] == ("bridge", "src"):
        return parts[2]
    return Path(file).name


def fails_alone(path, confirm):
    """Whether a transcript fails alone; with `confirm`, twice in a row (a sign-in
    with a real browser can miss its time on a loaded machine once). None when it
    hangs past the time limit."""
    for _ in range(2 if confirm else 1):
        code, _, _ = run(["target/debug/mcp-conformance", "run", path], RUN_LIMIT_S, runner_env())
        if code == 0:
            return False
        if code is None:
            return None
    return True


def runner_env():
    env = dict(os.environ)
    env.pop("CARGO", None)
    return env


def under_transcripts(name):
    """A transcript's path under transcripts/, as `caught_by` names it (a run of
    one file names it by the path it was given)."""
    return name.removeprefix("transcripts/")


def named_tests(filters):
    """Each `cargo test` filter of a mutant's `cargo_tests`; the first that fails
    is the answer."""
    seconds = 0.0
    failed = []
    for words in filters:
        code, output, more = run(["cargo", "test", *words.split()], BRIDGE_TESTS_LIMIT_S, cargo_env())
        seconds += more
        if code is None:
            return "timeout", [words], seconds
        if code != 0:
            failed += failed_tests(output)[:5] or [words]
            return "caught", failed, seconds
    return "missed", failed, seconds


def test_one(mutant, commit, with_tests):
    path = Path(mutant["file"])
    original = path.read_text()
    outcome = {
        "name": mutant["name"],
        "table": mutant["table"],
        "file": mutant["file"],
        "folder": folder_of(mutant["file"]),
        "mutant_sha": mutant_hash(mutant),
        "file_sha": code_hash(original),
        "commit": commit,
    }
    count = original.count(mutant["find"])
    if count != 1:
        outcome["outcome"] = "stale"
        outcome["find_count"] = count
        return outcome
    with_embedded = mutant["file"].startswith(EMBED)
    path.write_text(original.replace(mutant["find"], mutant["replace"], 1))
    try:
        code, output, build_s = build(with_embedded)
        outcome["build_s"] = round(build_s)
        if code != 0:
            outcome["outcome"] = "unviable" if code is not None else "build timeout"
            outcome["build_error"] = output[-1500:]
            return outcome
        started = time.monotonic()
        named = {}
        for name in mutant.get("caught_by") or []:
            # The first failure is confirmed by a second run; the others of the
            # same mutant only tell whether `caught_by` is right.
            confirmed = any(answer != "missed" for answer in named.values())
            answer = fails_alone(transcript_path(name), not confirmed)
            named[name] = "timeout" if answer is None else "caught" if answer else "missed"
        outcome["named"] = named
        caught_by_named = [name for name, answer in named.items() if answer != "missed"]
        if caught_by_named:
            outcome["outcome"] = "caught"
            outcome["by"] = caught_by_named
        else:
            code, output, _ = conformance()
            if code is None:
                outcome["outcome"] = "timeout"
            elif code != 0:
                outcome["outcome"] = "caught"
                outcome["by"] = [under_transcripts(name) for name in failed_transcripts(output)[:5]]
            else:
                outcome["outcome"] = "missed"
        outcome["run_s"] = round(time.monotonic() - started)
        if outcome["outcome"] == "missed" and with_tests:
            if mutant.get("cargo_tests"):
                answer, failed, _ = named_tests(mutant["cargo_tests"])
            else:
                code, output, _ = bridge_tests(with_embedded)
                answer = "timeout" if code is None else "caught" if code != 0 else "missed"
                failed = failed_tests(output)[:5] if code else []
            outcome["tests"] = answer
            if failed:
                outcome["tests_failed"] = failed
        return outcome
    finally:
        path.write_text(original)
        if with_embedded:
            # The embedded server of the restored tree, for the next mutant's M5.
            build(True)


def caught_alone(outcome):
    return outcome["outcome"] in ("caught", "timeout")


def caught_with_tests(outcome):
    return caught_alone(outcome) or outcome.get("tests") in ("caught", "timeout")


def summary(outcomes, commit):
    by_folder = defaultdict(Counter)
    for outcome in outcomes:
        counts = by_folder[outcome["folder"]]
        counts["mutants"] += 1
        counts["alone"] += caught_alone(outcome)
        counts["with tests"] += caught_with_tests(outcome)
        counts["not run"] += outcome["outcome"] in ("stale", "unviable", "build timeout")
    total = Counter()
    for counts in by_folder.values():
        total.update(counts)
    lines = [
        f"Hand-written mutants at commit `{commit}`: {len(outcomes)}.",
        "",
        "| folder | hand-written mutants | caught by the transcripts alone | by the transcripts and the tests | stale or unviable |",
        "|---|---|---|---|---|",
    ]
    for folder in sorted(by_folder) + ["all"]:
        counts = total if folder == "all" else by_folder[folder]
        name = "all" if folder == "all" else f"`{folder}`"
        lines.append(
            f"| {name} | {counts['mutants']} | {counts['alone']} | {counts['with tests']} "
            f"| {counts['not run']} |"
        )
    lines += ["", "Missed by the transcripts:", ""]
    lines += [
        f"- `{o['name']}` ({o['file']}): the tests {o.get('tests', 'not run')}"
        for o in outcomes
        if o["outcome"] == "missed"
    ] or ["- none"]
    lines += ["", "Named in `caught_by` and did not catch its mutant:", ""]
    lines += [
        f"- `{o['name']}`: `{name}`" + (f" (caught by `{under_transcripts(o['by'][0])}`)" if o.get("by") else "")
        for o in outcomes
        for name, answer in (o.get("named") or {}).items()
        if answer == "missed"
    ] or ["- none"]
    lines += ["", "Stale or unviable (to write again):", ""]
    lines += [
        f"- `{o['name']}`: {o['outcome']}"
        + (f" (`find` occurs {o['find_count']} times)" if "find_count" in o else "")
        for o in outcomes
        if o["outcome"] in ("stale", "unviable", "build timeout")
    ] or ["- none"]
    return "\n".join(lines) + "\n"


def still_settled(outcome, mutant, commit):
    """Whether a resumed run keeps an outcome: the mutant and its file's code are
    unchanged, and it was caught (a miss is tested again at another commit, since
    the transcripts may have grown)."""
    if outcome.get("mutant_sha") != mutant_hash(mutant):
        return False
    if outcome.get("file_sha") != code_hash(Path(mutant["file"]).read_text()):
        return False
    return caught_with_tests(outcome) or outcome.get("commit") == commit


def main():
    # A stop (kill, Ctrl-C) ends inside `test_one`, whose `finally` restores the file.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--mutants", type=Path, default=HAND_MUTANTS, help="the folder of the JSON files")
    parser.add_argument("--tables", nargs="*", default=[], help="only these files (names without .json)")
    parser.add_argument("--only", nargs="*", default=[], help="only the mutants of these names")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--no-tests", action="store_true", help="no cargo test for a missed mutant")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the whole conformance run on the unmutated tree (when it is known to pass)",
    )
    parser.add_argument("--pause-file", type=Path, help="no mutant starts while it exists")
    args = parser.parse_args()
    every = load_mutants(args.mutants)
    every_name = {m["name"] for m in every}
    mutants = [
        m
        for m in every
        if (not args.tables or m["table"] in args.tables) and (not args.only or m["name"] in args.only)
    ]
    commit = head_commit()
    args.out.mkdir(parents=True, exist_ok=True)
    record = args.out / "outcomes.jsonl"
    by_name = {m["name"]: m for m in mutants}
    done = {}
    if record.exists() and (args.resume or args.only or args.tables):
        # The outcomes of the mutants left out of this run stay; those of a
        # mutant no file holds any more go.
        kept = []
        for line in record.read_text().splitlines():
            outcome = json.loads(line)
            name = outcome["name"]
            if name not in every_name:
                continue
            if name not in by_name:
                kept.append(line)
            elif args.resume and still_settled(outcome, by_name[name], commit):
                done[name] = outcome
                kept.append(line)
        record.write_text("".join(line + "\n" for line in kept))
    elif record.exists():
        record.unlink()
    to_test = [m for m in mutants if m["name"] not in done]
    with_embedded = any(m["file"].startswith(EMBED) for m in to_test)
    if to_test:
        build_unmutated(with_embedded)
        if not args.no_baseline:
            code, output, _ = conformance()
            if code != 0:
                sys.exit("the conformance run fails on the unmutated bridge:\n" + output[-3000:])
    previous = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    outcomes = [o for o in previous if o["name"] not in by_name] + [done[m["name"]] for m in mutants if m["name"] in done]
    for number, mutant in enumerate(to_test, 1):
        while args.pause_file and args.pause_file.exists():
            time.sleep(5)
        outcome = test_one(mutant, commit, not args.no_tests)
        outcomes.append(outcome)
        with record.open("a") as out:
            out.write(json.dumps(outcome) + "\n")
        where = f" by {outcome['by'][0]}" if outcome.get("by") else ""
        tests = f", the tests: {outcome['tests']}" if "tests" in outcome else ""
        print(f"[{number}/{len(to_test)}] {outcome['outcome']}{where}{tests}: {mutant['name']}", flush=True)
        (args.out / "summary.md").write_text(summary(outcomes, commit))
    if to_test:
        # The tree is restored: build the bridge it holds again, so that no mutant
        # stays in target/ after the run.
        build(with_embedded)
    (args.out / "summary.md").write_text(summary(outcomes, commit))
    print((args.out / "summary.md").read_text())


if __name__ == "__main__":
    main()
