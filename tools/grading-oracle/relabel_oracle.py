#!/usr/bin/env python3
"""Re-label libs/grading/src/fixtures/cookbook-oracle.json with the pinned cookbook grader.

Reads the fixture's inputs (every case's fields except `expected` / `raises`), runs the transcribed cookbook
functions (cookbook_grading.py) on each, and writes the file back in the same layout with fresh labels, so
`git diff --exit-code` on the fixture shows whether the committed labels are what the pinned Python says.
cookbook-oracle.spec.ts reads the same file and compares the TypeScript port with every label.

ops (same meaning as in cookbook-oracle.spec.ts):
  grade   safe_grade(given, gt)                 (grade_answer under the cookbook's 1 s timeout; None -> False)
  norm    _normalize(s)
  mathd   normalize_answer(s)
  latex   LatexNodes2Text().latex_to_text(s)    (`raises: true` where pylatexenc raises)
  boxed   extract_boxed(s), null on ValueError
  gt      extract_gsm8k_final_answer(s), null on ValueError
  reward  [extract_boxed(completion) or null, check_format(completion), check_answer(completion, gt)]
          with gt = extract_gsm8k_final_answer(answer); the sample ended on its stop sequence.

Usage: python3 tools/grading-oracle/relabel_oracle.py [--fixture PATH] [--out PATH]
"""
import argparse
import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (the run record hashes every file)

import cookbook_grading as cg  # noqa: E402
import pylatexenc.version  # noqa: E402
import sympy  # noqa: E402
from pylatexenc import latex2text  # noqa: E402

PINNED = {"pylatexenc": "2.10", "sympy": "1.14.0"}
DEFAULT_FIXTURE = os.path.normpath(os.path.join(HERE, "..", "..", "libs", "grading", "src", "fixtures", "cookbook-oracle.json"))
LABEL_KEYS = ("expected", "raises")
ABOUT = (
    "Cases labelled by running the tinker-cookbook grader (math_grading.py @7c123d3631d576c05625dcc92ecbdc56ed21e9bd, "
    "math_env.py extract_gsm8k_final_answer / MathEnv.check_format / check_answer) under Python 3.11 with "
    "pylatexenc 2.10 and sympy 1.14; inputs drawn by a random generator of model-style answers and GSM8K test rows. "
    "'raises' marks where the Python raised."
)


def none_on_value_error(fn, *args):
    try:
        return fn(*args)
    except ValueError:
        return None


def label(case):
    """The fields to append to `case` (its inputs): {'expected': ...} or {'raises': True}."""
    op = case["op"]
    if op == "grade":
        return {"expected": cg.safe_grade(case["given"], case["gt"])}
    if op == "norm":
        return {"expected": cg._normalize(case["s"])}
    if op == "mathd":
        return {"expected": cg.normalize_answer(case["s"])}
    if op == "latex":
        try:
            return {"expected": latex2text.LatexNodes2Text().latex_to_text(case["s"])}
        except Exception:  # RecursionError, IndexError, parse errors: what `_normalize` swallows
            return {"raises": True}
    if op == "boxed":
        return {"expected": none_on_value_error(cg.extract_boxed, case["s"])}
    if op == "gt":
        return {"expected": none_on_value_error(cg.extract_gsm8k_final_answer, case["s"])}
    if op == "reward":
        completion = case["completion"]
        reference = cg.extract_gsm8k_final_answer(case["answer"])
        extracted = none_on_value_error(cg.extract_boxed, completion)
        return {"expected": [extracted, cg.check_format(completion), cg.check_answer(completion, reference)]}
    raise SystemExit("unknown op %r" % (op,))


def dump(about, cases):
    # One case a line, keys in input order with the label last (the fixture's committed layout).
    return (
        '{"about": ' + json.dumps(about, ensure_ascii=False) + ', "cases": ['
        + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "]}\n"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", default=DEFAULT_FIXTURE, help="file whose case inputs are read")
    ap.add_argument("--out", help="where to write the labelled file (default: over --fixture)")
    args = ap.parse_args()

    found = {"pylatexenc": pylatexenc.version.version_str, "sympy": sympy.__version__}
    if found != PINNED:
        sys.exit("found %r, the labels are pinned to %r (requirements.txt)" % (found, PINNED))
    logging.disable(logging.WARNING)  # safe_grade logs every timeout and exception

    with open(args.fixture, encoding="utf-8") as f:
        data = json.load(f)
    cases = []
    for case in data["cases"]:
        inputs = {k: v for k, v in case.items() if k not in LABEL_KEYS}
        cases.append({**inputs, **label(inputs)})
    out = args.out or args.fixture
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(ABOUT, cases))
    changed = sum(1 for a, b in zip(data["cases"], cases) if a != b)
    print("wrote %s: %d cases, %d labels differ from the input file" % (out, len(cases), changed))


if __name__ == "__main__":
    main()
