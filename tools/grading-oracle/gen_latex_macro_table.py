#!/usr/bin/env python3
"""Regenerate libs/grading/src/latex-macro-table.data.json from pylatexenc's default contexts.

The TypeScript LaTeX->text converter (libs/grading/src/latex-to-text.ts) re-implements
`pylatexenc.latex2text.LatexNodes2Text().latex_to_text`, the call the tinker-cookbook's `_parse_latex` makes.
Its macro/environment table is data read from the two default context databases of the pinned pylatexenc
(requirements.txt: pylatexenc==2.10, MIT, (c) Philippe Faist):

  - pylatexenc.latexwalker.get_default_latex_context_db(): how each macro/environment is *parsed*
    (argument spec, `optional_arg_no_space`, math mode);
  - pylatexenc.latex2text.get_default_latex_context_db(): how each is *rendered* to text.

Both are looked up the way pylatexenc looks them up (first category that knows the name wins), so each row is
the effective spec of that name. Row formats (see latex-macro-table.ts):
  macro:       [name, argspec | null, rendering, (1 when optional_arg_no_space)]
  environment: [name, argspec | null, rendering, is_math_mode]
rendering: a string (simplify_repl text), 0 (discarded), 1 (its arguments'/body's text), 2 (a callable
simplify_repl: a formatter re-implemented by name in latex-to-text.ts).

Usage: python3 tools/grading-oracle/gen_latex_macro_table.py [--out PATH]   (default: the committed file)
"""
import argparse
import json
import os
import sys

import pylatexenc
from pylatexenc import latex2text, latexwalker, macrospec
from pylatexenc.version import version_str

PINNED = "2.10"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "..", "libs", "grading", "src", "latex-macro-table.data.json"))


def argspec_of(spec):
    """The walker's argument spec of a macro/environment spec, or None when it takes no arguments."""
    if spec is None:
        return None
    parser = spec.args_parser
    if type(parser) is macrospec.MacroStandardArgsParser:
        return parser.argspec or None
    if type(parser).__name__ == "VerbatimArgsParser":
        # \verb|...|: its own delimiter rules, implemented by name ('verb') in latex-to-text.ts.
        if parser.verbatim_arg_type == "verb-macro":
            return "verb"
        # {verbatim}: pylatexenc scans to the next \end{verbatim}; the port parses it as the parser's base
        # argspec ('{'), a known simplification (no GSM8K answer holds a verbatim environment).
        return parser.argspec
    raise SystemExit("unhandled argument parser %r for %r: extend the generator and latex-to-text.ts" % (parser, spec))


def no_space_before_optional(spec):
    parser = getattr(spec, "args_parser", None)
    return bool(getattr(parser, "optional_arg_no_space", False))


# Rendered from the clock: pylatexenc 2.10 evaluates `_latex_today()` once at import, so \today renders the
# date the process started. A grader must not depend on the clock: the table records nothing (0) for it.
CLOCK_DEPENDENT_MACROS = {"today"}


def rendering_of(text_spec, default_discard):
    """What latex2text does with a node of this spec (LatexNodes2Text.macro_node_to_text /
    environment_node_to_text): a truthy simplify_repl wins, then discard, else the arguments'/body's text."""
    if text_spec is None:
        return 0 if default_discard else 1
    repl = text_spec.simplify_repl
    if repl:
        if isinstance(repl, str):
            return repl
        if callable(repl):
            return 2
        raise SystemExit("unhandled simplify_repl %r" % (repl,))
    if text_spec.discard:
        return repl if repl == "" else 0
    return 1


def unique_names(db, kind):
    names = []
    seen = set()
    it = db.iter_macro_specs() if kind == "macros" else db.iter_environment_specs()
    attr = "macroname" if kind == "macros" else "environmentname"
    for spec in it:
        name = getattr(spec, attr)
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names


def build_table():
    walker_db = latexwalker.get_default_latex_context_db()
    text_db = latex2text.get_default_latex_context_db()

    macro_names = sorted(set(unique_names(walker_db, "macros")) | set(unique_names(text_db, "macros")))
    macros = []
    for name in macro_names:
        wspec = walker_db.get_macro_spec(name)
        rendering = rendering_of(text_db.get_macro_spec(name), default_discard=True)
        if name in CLOCK_DEPENDENT_MACROS:
            rendering = 0
        row = [name, argspec_of(wspec), rendering]
        if no_space_before_optional(wspec):
            row.append(1)
        macros.append(row)

    env_names = unique_names(walker_db, "environments")
    env_names += [n for n in unique_names(text_db, "environments") if n not in set(env_names)]
    environments = []
    for name in env_names:
        wspec = walker_db.get_environment_spec(name)
        environments.append([
            name,
            argspec_of(wspec),
            rendering_of(text_db.get_environment_spec(name), default_discard=False),
            bool(wspec.is_math_mode) if wspec is not None else False,
        ])
    return macros, environments


def dump(macros, environments):
    about = (
        "Macro and environment table of pylatexenc %s's default LatexWalker + LatexNodes2Text contexts "
        "(MIT licence, (c) Philippe Faist). Generated by tools/grading-oracle/gen_latex_macro_table.py; "
        "do not edit by hand. Row formats: see libs/grading/src/latex-macro-table.ts." % version_str
    )
    rows = lambda rs: ",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in rs)
    return (
        "{\n  \"about\": " + json.dumps(about, ensure_ascii=False) + ",\n"
        "  \"pylatexenc\": " + json.dumps(version_str) + ",\n"
        "  \"macros\": [\n" + rows(macros) + "\n  ],\n"
        "  \"environments\": [\n" + rows(environments) + "\n  ]\n}\n"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    if version_str != PINNED:
        sys.exit("pylatexenc %s found at %s; the table is pinned to %s (requirements.txt)"
                 % (version_str, os.path.dirname(pylatexenc.__file__), PINNED))
    macros, environments = build_table()
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(dump(macros, environments))
    print("wrote %s: %d macros, %d environments (pylatexenc %s)" % (args.out, len(macros), len(environments), version_str))


if __name__ == "__main__":
    main()
