#!/usr/bin/env python3
"""Check that cookbook_grading.py still holds the pinned cookbook functions verbatim.

Compares, by Python AST (so comments and blank lines do not count), every top-level function and constant
of cookbook_grading.py that the upstream files define too with its upstream definition:
  math_grading.py @ 7c123d3631d576c05625dcc92ecbdc56ed21e9bd and math_env.py @ 5fe5aaf48ba8a89be1625db88509bec6a6a08556.
The two are read from files (take them from a tinker-cookbook checkout, e.g.
`git show 7c123d3631d576c05625dcc92ecbdc56ed21e9bd:tinker_cookbook/recipes/math_rl/math_grading.py`).
The adapted check_format / check_answer and the grade_answer_math_verify stub are listed as not compared.

Usage: python3 tools/grading-oracle/check_transcription.py MATH_GRADING_PY MATH_ENV_PY
"""
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTED = {"check_format", "check_answer", "grade_answer_math_verify"}
VERBATIM = {
    "math_grading": [
        "normalize_answer", "_fix_fracs", "_fix_a_slash_b", "_remove_right_units", "_fix_sqrt", "_strip_string",
        "extract_boxed", "BAD_SUBSTRINGS", "BAD_REGEXES", "TUPLE_CHARS", "_sympy_parse", "_parse_latex",
        "_is_float", "_is_int", "_is_frac", "_str_is_int", "_str_to_int", "_inject_implicit_mixed_number",
        "_strip_properly_formatted_commas", "_normalize", "count_unknown_letters_in_expr", "should_allow_eval",
        "are_equal_under_sympy", "split_tuple", "grade_answer", "run_with_timeout_signal",
    ],
    "math_env": ["safe_grade", "extract_gsm8k_final_answer"],
}


def definitions(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.dump(node)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ours = definitions(os.path.join(HERE, "cookbook_grading.py"))
    upstream = {"math_grading": definitions(sys.argv[1]), "math_env": definitions(sys.argv[2])}
    failures = []
    for source, names in VERBATIM.items():
        for name in names:
            if name not in upstream[source]:
                failures.append("%s: not defined upstream in %s" % (name, source))
            elif name not in ours:
                failures.append("%s: missing from cookbook_grading.py" % name)
            elif ours[name] != upstream[source][name]:
                failures.append("%s: differs from %s" % (name, source))
    listed = set(sum(VERBATIM.values(), [])) | ADAPTED
    unlisted = [n for n in ours if n not in listed and n not in ("logger", "T")]
    if unlisted:
        failures.append("defined here but not listed as verbatim or adapted: %s" % ", ".join(unlisted))
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print("%d definitions identical to upstream; adapted, not compared: %s"
          % (sum(len(v) for v in VERBATIM.values()), ", ".join(sorted(ADAPTED))))


if __name__ == "__main__":
    main()
