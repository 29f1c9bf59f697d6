#!/usr/bin/env python3
"""Mutation testing of the corpus: how many wrong readers does it catch?

Every comparison, integer constant, offset (+/-) and bit position (shift amounts and masks are
integer constants) in the framing and codec code of the independent Python reader
(conformance/adapters/py_ninfer/reader.py: its "codecs" section, spec/codecs.md, and its
".ninfer v2" section, spec/ninfer-container.md) is mutated one at a time by an AST rewrite:

  comparison  <  -> <=, <= -> <, > -> >=, >= -> >, == -> !=, != -> ==
  constant    n  -> n + 1 and n - 1 (integers only; not inside f-strings, not bools)
  offset      a + b -> a - b, a - b -> a + b

Branches of the deliberate `--bug` modes (`if BUG ...`, `x if BUG ... else y`) and the `flip`
helper they use (and its element argument) are not mutated. Each mutant runs in process over the cases py_ninfer supports; its answers (result,
class, observation; not the message text) are compared with the unmutated reader's. At the first
difference the kill is confirmed by the real judge — `ninfer-ternary check-reader` with the
mutant file as the adapter, filtered to that case — and only a confirmed failure counts as killed.
A mutant that answers every case like the original is a survivor: it passes check-reader.

Usage:
  scripts/reader_mutants.py [--bin target/release/ninfer-ternary] [--limit N] [--every K]
                            [--json OUT] [--list]
  --every K   run every K-th mutant only (the CI subset); --limit N the first N.
Output: one line per mutant, then `mutation score: killed/total`; the survivors listed.
"""
import argparse
import ast
import copy
import fnmatch
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
READER = os.path.join(ROOT, "conformance", "adapters", "py_ninfer", "reader.py")
CAPS = os.path.join(ROOT, "conformance", "adapters", "py_ninfer", "capabilities.json")
SECTIONS = ("- codecs (", "- .ninfer v2 (")  # section header prefixes in reader.py
SKIP_FUNCS = {"flip", "values_sha256", "load_registry"}
CMP_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq}
CMP_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def mutable_lines(src):
    """Line ranges of the sections whose code is mutated."""
    lines = src.splitlines()
    starts = [i + 1 for i, l in enumerate(lines) if l.startswith("# ----")]
    ranges = []
    for i, l in enumerate(lines):
        if l.startswith("# ----") and any(s in l.replace("-" * 8 + " ", "- ") for s in SECTIONS):
            end = min([s for s in starts if s > i + 1] + [len(lines) + 1])
            ranges.append((i + 1, end))
    return ranges


def is_bug_test(node):
    return isinstance(node, ast.If) and "BUG" in ast.unparse(node.test)


class Sites(ast.NodeVisitor):
    """Collects mutation sites: (node path key, kind, description)."""

    def __init__(self, ranges):
        self.ranges, self.sites, self.func = ranges, [], None
        self.in_fstring = 0

    def inside(self, node):
        ln = getattr(node, "lineno", 0)
        return self.func is not None and any(a <= ln < b for a, b in self.ranges)

    def visit_FunctionDef(self, node):
        if node.name in SKIP_FUNCS:
            return
        prev, self.func = self.func, node.name
        self.generic_visit(node)
        self.func = prev

    def visit_If(self, node):
        if is_bug_test(node):
            for n in node.orelse:  # the non-bug branch is ordinary code
                self.visit(n)
            return
        self.generic_visit(node)

    def visit_IfExp(self, node):
        if "BUG" in ast.unparse(node.test):  # `x if BUG == ... else y`: only y is ordinary code
            self.visit(node.orelse)
            return
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == "flip":
            self.visit(node.args[0])  # flip(t, elem) acts only under --bug flip_trit
            return
        self.generic_visit(node)

    def visit_JoinedStr(self, node):
        return  # messages, not behaviour

    def visit_Compare(self, node):
        if self.inside(node):
            for i, op in enumerate(node.ops):
                if type(op) in CMP_SWAP:
                    self.sites.append(((node.lineno, node.col_offset, "cmp", i), self.func,
                                       f"{CMP_TEXT[type(op)]} -> {CMP_TEXT[CMP_SWAP[type(op)]]}"))
        self.generic_visit(node)

    def visit_Constant(self, node):
        if self.inside(node) and type(node.value) is int:
            for d in (1, -1):
                self.sites.append(((node.lineno, node.col_offset, "const", d), self.func,
                                   f"{node.value} -> {node.value + d}"))

    def visit_BinOp(self, node):
        if self.inside(node) and type(node.op) in (ast.Add, ast.Sub):
            a, b = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
            self.sites.append(((node.lineno, node.col_offset, "binop", 0), self.func, f"{a} -> {b}"))
        self.generic_visit(node)


class Apply(ast.NodeTransformer):
    def __init__(self, key):
        self.key = key

    def visit_Compare(self, node):
        self.generic_visit(node)
        ln, col, kind, i = self.key
        if kind == "cmp" and (node.lineno, node.col_offset) == (ln, col):
            node.ops[i] = CMP_SWAP[type(node.ops[i])]()
        return node

    def visit_Constant(self, node):
        ln, col, kind, d = self.key
        if kind == "const" and (node.lineno, node.col_offset) == (ln, col) and type(node.value) is int:
            return ast.copy_location(ast.Constant(node.value + d), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        ln, col, kind, _ = self.key
        if kind == "binop" and (node.lineno, node.col_offset) == (ln, col):
            node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        return node


def load_cases():
    caps = json.load(open(CAPS))
    unsupported = [u["feature"] if isinstance(u, dict) else u for u in caps.get("unsupported", [])]
    man = json.load(open(os.path.join(ROOT, "conformance", "MANIFEST.json")))
    corpus = os.path.join(ROOT, "conformance")
    cases = []
    for c in man["cases"]:
        if any(fnmatch.fnmatchcase(f, p) for f in c["features"] for p in unsupported):
            continue
        req = {"protocol": 2, "id": c["id"], "kind": c["kind"], "file": os.path.join(corpus, c["file"]),
               "params": c.get("params", {}),
               "inputs": {n: os.path.join(corpus, n) for n in c.get("inputs", [])}}
        cases.append(req)
    return cases


class Timeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise Timeout()


def answer(module_ns, req, seconds=20):
    """One case, in process: the (result, class, observation) triple, or a crash marker."""
    stdin, stdout = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(json.dumps(req)), io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        code = module_ns["main"](["reader.py", req["file"]])
        out = sys.stdout.getvalue().strip()
        a = json.loads(out)
        return json.dumps([a.get("result"), a.get("class"), a.get("observation"), a.get("feature"), code],
                          sort_keys=True)
    except Timeout:
        return "timeout"
    except BaseException as e:  # a crash is an answer too (check-reader fails it)
        return f"crash {type(e).__name__}"
    finally:
        signal.alarm(0)
        sys.stdin, sys.stdout = stdin, stdout


def load(tree, path):
    ns = {"__name__": "py_ninfer_mutant", "__file__": path}
    exec(compile(tree, path, "exec"), ns)
    return ns


def confirm(bin_path, tree, n, case_id):
    """Runs check-reader on the mutant for one case; True when it fails there."""
    d = os.path.join(ROOT, "target", "mutants", str(n))  # ../../../spec resolves to the repo's spec/
    os.makedirs(d, exist_ok=True)
    f = os.path.join(d, "reader.py")
    with open(f, "w") as fh:
        fh.write(ast.unparse(tree) + "\n")
    py = os.path.join(ROOT, ".venv", "bin", "python")
    r = subprocess.run([bin_path, "check-reader", "--adapter", f"{py} {f}", "--capabilities", CAPS,
                        "--filter", case_id, "--jobs", "1", "--quiet", "--timeout", "30"],
                       cwd=ROOT, capture_output=True, text=True)
    return r.returncode != 0 and "FAIL" in r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "ninfer-ternary"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--splice", help="replace the mutation-score block of this Markdown file")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    src = open(READER).read()
    tree = ast.parse(src)
    v = Sites(mutable_lines(src))
    v.visit(tree)
    sites = v.sites
    total_sites = len(sites)
    if not total_sites:
        print("no mutation sites: the section headers of reader.py changed (SECTIONS)")
        return 2
    chosen = sites[::max(1, args.every)]
    if args.limit:
        chosen = chosen[:args.limit]
    print(f"py_ninfer reader.py sha256 {hashlib.sha256(src.encode()).hexdigest()[:16]}: "
          f"{total_sites} mutants in the codec and .ninfer framing sections; running {len(chosen)}")
    if args.list:
        for key, func, desc in chosen:
            print(f"  line {key[0]:4} {func:28} {desc}")
        return 0
    cases = load_cases()
    import numpy as np  # noqa: F401  (the reader's import, loaded once)
    base_ns = load(tree, READER)
    t0 = time.time()
    baseline = [answer(base_ns, c) for c in cases]
    bad = [c["id"] for c, a in zip(cases, baseline) if a.startswith(("crash", "timeout"))]
    if bad:
        print(f"the unmutated reader crashes on {bad[:5]}: fix that first")
        return 2
    print(f"baseline: {len(cases)} cases in {time.time() - t0:.1f}s")
    results = []
    for n, (key, func, desc) in enumerate(chosen):
        m = Apply(key).visit(copy.deepcopy(tree))
        ast.fix_missing_locations(m)
        status, where = "survived", ""
        try:
            ns = load(m, READER)
        except Exception as e:  # a mutant that does not even load is killed by every case
            ns, status, where = None, "killed", f"load error {type(e).__name__}"
        if ns is not None:
            for c, want in zip(cases, baseline):
                got = answer(ns, c)
                if got != want:
                    if confirm(args.bin, m, n, c["id"]):
                        status, where = "killed", c["id"]
                        break
                    where = f"differs on {c['id']} but passes there"
        line = f"{status:8} line {key[0]:4} {func:28} {desc:14} {where}"
        print(line, flush=True)
        results.append({"line": key[0], "function": func, "mutation": desc, "status": status, "by": where})
    killed = sum(r["status"] == "killed" for r in results)
    print(f"\nmutation score: {killed}/{len(results)} killed "
          f"({100.0 * killed / max(1, len(results)):.1f} %), {len(results) - killed} survived")
    for r in results:
        if r["status"] != "killed":
            print(f"  SURVIVOR line {r['line']} {r['function']}: {r['mutation']}  {r['by']}")
    if args.splice:
        md = [f"Mutants: {len(results)} of {total_sites} sites "
              f"(`reader.py` sha256 `{hashlib.sha256(src.encode()).hexdigest()[:16]}`); "
              f"**mutation score {killed}/{len(results)} = {100.0 * killed / max(1, len(results)):.1f} %**.",
              "", "| survivor | line | function | mutation |", "|---:|---:|---|---|"]
        for i, r in enumerate(x for x in results if x["status"] != "killed"):
            md.append(f"| {i + 1} | {r['line']} | `{r['function']}` | `{r['mutation']}` |")
        doc = open(args.splice).read()
        b, e = "<!-- BEGIN mutation-score -->", "<!-- END mutation-score -->"
        if b not in doc or e not in doc:
            print(f"{args.splice}: no mutation-score markers")
            return 2
        head, rest = doc.split(b, 1)
        _, tail = rest.split(e, 1)
        with open(args.splice, "w") as fh:
            fh.write(head + b + "\n" + "\n".join(md) + "\n" + e + tail)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"reader": "conformance/adapters/py_ninfer/reader.py",
                       "reader_sha256": hashlib.sha256(src.encode()).hexdigest(),
                       "sites": total_sites, "run": len(results), "killed": killed, "results": results},
                      fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
