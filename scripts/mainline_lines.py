#!/usr/bin/env python3
"""Re-derives the rule layer of every GGUF n_ case by running mainline, and proves the gguf.cpp
line each refusal cites (scripts/mainline-lines.sh builds the instrumented driver).

For each case of conformance/MANIFEST.json with kind gguf and outcome reject:
  r1    gguf_init_from_file(no_alloc=true)   -- how llama.cpp's model loader calls it
  r0    gguf_init_from_file(no_alloc=false)  -- gguf.cpp also reads the tensor data
  bound llama.cpp's loader bounds check, src/llama-model-loader.h:46-48
        (offs = data_offset + tensor offset; refuse when offs + nbytes wraps or > file size),
        applied to the data offset, tensor offsets and ggml_nbytes that gguf.cpp returned
Derived layer: spec-mode case -> spec; r1 refuses -> mainline; r0 or bound refuses -> loader;
a decode-phase consumer case or a row citing the loader's sources -> loader (by source: the
typed reads and required keys are not run here); otherwise recommended. Checks, per case:
the row's layer (and the manifest's rule_layer) equal the derived one; the row's 'mainline'
field is 'refuses' exactly when r1 refuses; and when r1 refuses and the row cites gguf.cpp, the
first probe line of the run (the innermost check that refused) lies in the first cited range.
Prints "FAIL <case> <why>" per deviation and exits 1 if any."""
import argparse
import json
import os
import re
import subprocess
import sys


def run(driver, no_alloc, path):
    p = subprocess.run([driver, "1" if no_alloc else "0", path], capture_output=True, timeout=60)
    probes = [int(m) for m in re.findall(rb"gguf-probe gguf\.cpp:(\d+)", p.stderr)]
    if p.returncode == 1 and p.stdout.strip() == b"reject":
        return "reject", probes, None
    if p.returncode != 0:
        return f"crash({p.returncode})", probes, None
    return "accept", probes, p.stdout.decode("ascii").splitlines()


def bounds_refuses(lines, size):
    """llama-model-loader.h:46-48 over gguf.cpp's own values; the tensor it refuses, or None."""
    data_offset = int(lines[0].split()[3])
    for line in lines[1:]:
        f = line.split(" ")
        if f[0] != "tensor":
            continue
        off, nbytes = int(f[7]), int(f[8])
        offs = data_offset + off
        end = offs + nbytes
        if end >= 1 << 64 or end > size:
            return bytes.fromhex(f[1]).decode("utf-8", "replace")
    return None


def cited_range(where):
    m = re.match(r"ggml/src/gguf\.cpp:(\d+)(?:-(\d+))?", where)
    if not m:
        return None
    a = int(m.group(1))
    return a, int(m.group(2) or a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--corpus", default="conformance")
    ap.add_argument("--spec", default="spec/gguf.json")
    ap.add_argument("--tsv")
    a = ap.parse_args()
    rows = {r["case"]: r for r in json.load(open(a.spec))["rule_layers"]["cases"]}
    man = json.load(open(os.path.join(a.corpus, "MANIFEST.json")))
    fails, table, seen = [], [], set()

    def fail(case, why):
        fails.append(case)
        print(f"FAIL {case} {why}")

    for c in man["cases"]:
        if c["kind"] != "gguf" or c["expect"]["outcome"] != "reject":
            continue
        name = c["id"].split("/", 1)[1][2:]
        seen.add(name)
        row = rows.get(name)
        if row is None:
            fail(name, "no spec/gguf.json rule_layers row")
            continue
        path = os.path.join(a.corpus, c["file"])
        size = os.path.getsize(path)
        v1, p1, out1 = run(a.driver, True, path)
        v0, p0, _ = run(a.driver, False, path)
        bound = bounds_refuses(out1, size) if v1 == "accept" else None
        params = c.get("params") or {}
        where = row.get("where", "")
        if params.get("mode") == "spec":
            derived = "spec"
        elif v1 != "accept":
            derived = "mainline"
        elif v0 != "accept" or bound is not None:
            derived = "loader"
        elif "consumer" in params or where.startswith("src/llama-model"):
            derived = "loader (by source)"
        else:
            derived = "recommended"
        if v1.startswith("crash") or v0.startswith("crash"):
            fail(name, f"mainline crashed: no_alloc=true {v1}, no_alloc=false {v0}")
        if derived.split()[0] != row["layer"]:
            fail(name, f"labelled '{row['layer']}', derived '{derived}' "
                       f"(no_alloc=true {v1}, no_alloc=false {v0}, loader bounds "
                       f"{'refuses ' + repr(bound) if bound is not None else 'pass'})")
        if c.get("rule_layer") != row["layer"]:
            fail(name, f"manifest rule_layer '{c.get('rule_layer')}' != spec/gguf.json '{row['layer']}'")
        want = "refuses" if v1 == "reject" else "accepts"
        if row.get("mainline") != want:
            fail(name, f"'mainline': '{row.get('mainline')}' but gguf.cpp(no_alloc=true) {want}")
        line = p1[0] if (v1 == "reject" and p1) else None
        rng = cited_range(where)
        if v1 == "reject":
            if not p1:
                fail(name, "refused without any probe line")
            elif rng is None:
                fail(name, f"refused at gguf.cpp:{line} but cites '{where}'")
            elif not rng[0] <= line <= rng[1]:
                fail(name, f"cites gguf.cpp:{rng[0]}-{rng[1]} but gguf.cpp:{line} refuses "
                           f"(probe chain {','.join(map(str, p1[:6]))})")
        alloc_line = p0[0] if (v0 == "reject" and p0) else None
        table.append((name, row["layer"], derived, v1, f"gguf.cpp:{line}" if line else "-",
                      v0, f"gguf.cpp:{alloc_line}" if alloc_line else "-",
                      "refuses" if bound is not None else ("pass" if v1 == "accept" else "-"), where))
    for name in sorted(set(rows) - seen):
        fail(name, "row names no GGUF n_ case of the manifest")
    hdr = ("case", "layer", "derived", "no_alloc=true", "refusing line", "no_alloc=false",
           "refusing line (alloc)", "loader bounds", "cited")
    if a.tsv:
        with open(a.tsv, "w") as f:
            for r in [hdr] + table:
                f.write("\t".join(r) + "\n")
    from collections import Counter
    print(f"{len(table)} GGUF n_ cases run: derived layers "
          + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r[2] for r in table).items()))
          + f"; {sum(1 for r in table if r[4] != '-')} refusals' cited lines checked")
    if fails:
        print(f"{len(set(fails))} case(s) deviate")
        sys.exit(1)


if __name__ == "__main__":
    main()
