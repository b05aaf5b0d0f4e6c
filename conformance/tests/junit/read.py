"""Reads a JUnit XML file with junitparser, a JUnit-reading library of its own, and
prints what it read as JSON, for tests/junit_report.rs to check.

    python read.py REPORT.xml
"""
import json
import sys

from junitparser import Error, Failure, JUnitXml, Properties, Skipped


def properties(element):
    found = element.child(Properties)
    return [[p.name, p.value] for p in found] if found is not None else []


def case(test):
    results = test.result
    kinds = {Failure: "failure", Skipped: "skipped", Error: "error"}
    outcome = "passed"
    message = text = None
    if results:
        first = results[0]
        outcome = kinds.get(type(first), type(first).__name__)
        message, text = first.message, first.text
    return {
        "name": test.name,
        "classname": test.classname,
        "time": test.time,
        "outcome": outcome,
        "results": len(results),
        "message": message,
        "text": text,
        "properties": properties(test),
    }


def counts(element):
    return {
        "tests": element.tests,
        "failures": element.failures,
        "errors": element.errors,
        "skipped": element.skipped,
        "time": element.time,
    }


def main(path):
    report = JUnitXml.fromfile(path)
    suites = []
    for suite in report:
        suites.append(
            {
                "name": suite.name,
                **counts(suite),
                "properties": [[p.name, p.value] for p in suite.properties()],
                "cases": [case(test) for test in suite],
            }
        )
    print(json.dumps({"name": report.name, **counts(report), "suites": suites}))


if __name__ == "__main__":
    main(sys.argv[1])
