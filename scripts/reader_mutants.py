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

Equivalent mutants are argued one per line in scripts/reader_mutants_equivalent.txt (function,
mutation, the mutated source line, why): a survivor matching an entry counts as equivalent; any
other survivor is unexplained and fails the run (exit 1), and so does an entry that matches no
survivor of a full run (stale).

Usage:
  scripts/reader_mutants.py [--bin target/release/ninfer-ternary] [--limit N] [--every K]
                            [--json OUT] [--list] [--record FILE] [--splice MD]
  --every K   run every K-th mutant only (the CI subset); --limit N the first N.
  --record    (full runs only) write the measurement as JSON; tests/it/mutation_score.rs checks
              that it is current (reader.py and corpus digests) and that the --splice block of
              conformance/INTEROP.md is exactly what it renders.
Output: one line per mutant, then `mutation score: killed/total`; the survivors listed.
A full run took 588 s on two shared, loaded cores (debug binary); the block records the time.
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
EQUIVALENT = os.path.join(ROOT, "scripts", "reader_mutants_equivalent.txt")
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


def load_equivalents():
    """(function, mutation, stripped source line) -> why, from EQUIVALENT."""
    out = {}
    for raw in open(EQUIVALENT):
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = [x.strip() for x in raw.rstrip("\n").split(" | ")]
        if len(parts) != 4:
            raise SystemExit(f"{EQUIVALENT}: not 'function | mutation | source | why': {raw!r}")
        out[tuple(parts[:3])] = parts[3]
    return out


def corpus_digest():
    """sha256 of the corpus as the score depends on it: every case's id and file digest."""
    man = json.load(open(os.path.join(ROOT, "conformance", "MANIFEST.json")))
    lines = sorted(f"{c['id']} {c['sha256']}\n" for c in man["cases"])
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def render_block(rec):
    """The mutation-score block of INTEROP.md (tests/it/mutation_score.rs renders the same)."""
    run, killed, eq = rec["run"], rec["killed"], len(rec["equivalent"])
    unexplained = run - killed - eq
    judged = max(1, run - eq)
    md = [f"Mutants: {run} of {rec['sites']} sites (`reader.py` sha256 `{rec['reader_sha256'][:16]}`, "
          f"corpus digest `{rec['corpus_sha256'][:16]}`): {killed} killed, {eq} equivalent, "
          f"{unexplained} unexplained; **mutation score {killed}/{run - eq} = "
          f"{100.0 * killed / judged:.1f} %** of the non-equivalent mutants "
          f"({100.0 * killed / max(1, run):.1f} % of all). Measured in {rec['seconds']} s.",
          "", "| equivalent | line | function | mutation | why |", "|---:|---:|---|---|---|"]
    for i, r in enumerate(rec["equivalent"]):
        md.append(f"| {i + 1} | {r['line']} | `{r['function']}` | `{r['mutation']}` | {r['why']} |")
    if rec["survivors"]:
        md += ["", "| unexplained survivor | line | function | mutation |", "|---:|---:|---|---|"]
        for i, r in enumerate(rec["survivors"]):
            md.append(f"| {i + 1} | {r['line']} | `{r['function']}` | `{r['mutation']}` |")
    return "\n".join(md)


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
    ap.add_argument("--record", help="write the measurement (full runs only) as JSON")
    args = ap.parse_args()
    full = args.every <= 1 and not args.limit
    if (args.record or args.splice) and not full:
        print("--record and --splice need a full run (no --every, no --limit)")
        return 2
    equivalents = load_equivalents()
    src_lines = open(READER).read().splitlines()
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
    t_run = time.time()
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
        why = equivalents.get((func, desc, src_lines[key[0] - 1].strip()))
        if status == "survived" and why is not None:
            status, where = "equivalent", why
        line = f"{status:8} line {key[0]:4} {func:28} {desc:14} {where}"
        print(line, flush=True)
        results.append({"line": key[0], "function": func, "mutation": desc, "status": status, "by": where})
    killed = sum(r["status"] == "killed" for r in results)
    equivalent = [r for r in results if r["status"] == "equivalent"]
    survivors = [r for r in results if r["status"] == "survived"]
    print(f"\nmutation score: {killed}/{len(results)} killed "
          f"({100.0 * killed / max(1, len(results)):.1f} %), {len(equivalent)} equivalent, "
          f"{len(survivors)} unexplained survivors")
    for r in survivors:
        print(f"  SURVIVOR line {r['line']} {r['function']}: {r['mutation']}  {r['by']}")
    used = {(r["function"], r["mutation"], src_lines[r["line"] - 1].strip()) for r in equivalent}
    stale = [k for k in equivalents if k not in used] if full else []
    for k in stale:
        print(f"  STALE equivalent entry (no such survivor): {' | '.join(k)}")
    rec = {"reader": "conformance/adapters/py_ninfer/reader.py",
           "reader_sha256": hashlib.sha256(src.encode()).hexdigest(),
           "corpus_sha256": corpus_digest(),
           "sites": total_sites, "run": len(results), "killed": killed,
           "seconds": int(round(time.time() - t_run)),
           "equivalent": [{"line": r["line"], "function": r["function"], "mutation": r["mutation"],
                           "why": r["by"]} for r in equivalent],
           "survivors": [{"line": r["line"], "function": r["function"], "mutation": r["mutation"]}
                         for r in survivors]}
    if args.record:
        with open(args.record, "w") as fh:
            json.dump(rec, fh, indent=1)
            fh.write("\n")
    if args.splice:
        doc = open(args.splice).read()
        b, e = "<!-- BEGIN mutation-score -->", "<!-- END mutation-score -->"
        if b not in doc or e not in doc:
            print(f"{args.splice}: no mutation-score markers")
            return 2
        head, rest = doc.split(b, 1)
        _, tail = rest.split(e, 1)
        with open(args.splice, "w") as fh:
            fh.write(head + b + "\n" + render_block(rec) + "\n" + e + tail)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"reader": "conformance/adapters/py_ninfer/reader.py",
                       "reader_sha256": hashlib.sha256(src.encode()).hexdigest(),
                       "sites": total_sites, "run": len(results), "killed": killed, "results": results},
                      fh, indent=1)
            fh.write("\n")
    return 1 if survivors or stale else 0


if __name__ == "__main__":
    sys.exit(main())
