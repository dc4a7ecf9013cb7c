#!/usr/bin/env python3
"""compare.py INPUT NAME=ANSWERS... [--expect HOSTILE_JSON]: the batch answers of several digest
implementations must be the same, line by line; the first difference fails, printing the input
document and every implementation's answer. With --expect, hostile.json's checked-in answers
(from the C++ library) must be among them for its documents too."""

import base64
import json
import sys


def show(data):
    text = repr(data)
    return text if len(text) <= 600 else text[:600] + "... (%d bytes)" % len(data)


def main(argv):
    expect = None
    if "--expect" in argv:
        i = argv.index("--expect")
        expect = argv[i + 1]
        del argv[i:i + 2]
    inputs_path, named = argv[0], argv[1:]
    with open(inputs_path, encoding="ascii") as f:
        inputs = f.read().splitlines()
    answers = {}
    for item in named:
        name, _, path = item.partition("=")
        with open(path, encoding="ascii") as f:
            answers[name] = f.read().splitlines()
    expected = {}
    if expect:
        with open(expect, encoding="utf-8") as f:
            for row in json.load(f):
                r = row["result"]
                expected[row["input_b64"]] = ("ok %s %s" % (r["canonical_b64"], r["digest"]) if "digest" in r
                                              else "err " + r["error"], row["name"])
    for number, line in enumerate(inputs, 1):
        got = {name: (lines[number - 1] if number <= len(lines) else "<no answer>") for name, lines in answers.items()}
        want = expected.get(line)
        if len(set(got.values())) != 1 or (want and want[0] not in got.values()):
            print("crosscheck: document %d differs%s" % (number, " (hostile.json: %s)" % want[1] if want else ""))
            print("  input: %s" % show(base64.b64decode(line)))
            if want:
                print("  %-8s %s" % ("expected", want[0]))
            for name, answer in got.items():
                print("  %-8s %s" % (name, answer))
            return 1
    for name, lines in answers.items():
        if len(lines) != len(inputs):
            print("crosscheck: %s answered %d lines for %d documents" % (name, len(lines), len(inputs)))
            return 1
    print("crosscheck: %d documents, %s agree" % (len(inputs), ", ".join(answers)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
