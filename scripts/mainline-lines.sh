#!/usr/bin/env bash
# Proves spec/gguf.json rule_layers by running mainline (PROTOCOL.md §6.1):
#  1. builds an instrumented copy of the pinned ggml/src/gguf.cpp (scripts/setup-mainline.sh's
#     sources, same flags): every `return false;`, `return nullptr;`, `ok = false;` and
#     `GGML_LOG_ERROR(` line also prints "gguf-probe gguf.cpp:<line>" to stderr, on the same
#     line (the copy has the same line numbers as the original; checked);
#  2. scripts/mainline_lines.py runs every GGUF n_ case with gguf_init_from_file(no_alloc=true)
#     and (no_alloc=false), plus llama.cpp's loader bounds check (src/llama-model-loader.h:46-48)
#     over gguf.cpp's own offsets and sizes, re-derives each case's rule layer and checks that the
#     first probe line of every refusal lies in the case's cited gguf.cpp range;
#  3. negative controls: a wrong cited line (type_minus_1 cited at 740-741) and a wrong layer
#     (size_past_eof labelled 'recommended') must each fail on exactly that case.
# Exits non-zero on any deviation.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/setup-mainline.sh >/dev/null
PIN=0.3.36
DIR=${MAINLINE_DIR:-target/mainline}
SRC=$DIR/llama_cpp_python-$PIN/vendor/llama.cpp/ggml
B=$DIR/build
P=$DIR/probe; mkdir -p "$P"
OUT=${OUT:-target/conformance}; mkdir -p "$OUT"
# Instrumented copy: same-line substitutions only.
sed -e 's/return false;/return (gguf_probe(__LINE__), false);/g' \
    -e 's/return nullptr;/return (gguf_probe(__LINE__), nullptr);/g' \
    -e 's/\bok = false;/ok = (gguf_probe(__LINE__), false);/g' \
    -e 's/GGML_LOG_ERROR(/gguf_probe(__LINE__), GGML_LOG_ERROR(/g' \
    "$SRC/src/gguf.cpp" > "$P/gguf_probe.cpp"
if [ "$(wc -l < "$P/gguf_probe.cpp")" != "$(wc -l < "$SRC/src/gguf.cpp")" ]; then
  echo "mainline-lines: the instrumented copy has other line numbers than gguf.cpp" >&2; exit 1
fi
n=$(grep -c 'gguf_probe(__LINE__)' "$P/gguf_probe.cpp")
printf '#pragma once\n#include <stdio.h>\nstatic inline void gguf_probe(int line) { fprintf(stderr, "gguf-probe gguf.cpp:%%d\\n", line); }\n' > "$P/probe.h"
stamp="$PIN $(sha256sum "$P/gguf_probe.cpp" "$B/driver.o" | sha256sum | cut -c1-16)"
if [ ! -x "$P/gguf-mainline-probe" ] || [ "$(cat "$P/stamp" 2>/dev/null)" != "$stamp" ]; then
  c++ -std=gnu++17 -O1 -w -include "$P/probe.h" -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -DGGML_SCHED_MAX_COPIES=4 -DNDEBUG \
    -I"$SRC/include" -I"$SRC/src" -I"$B" -c "$P/gguf_probe.cpp" -o "$P/gguf_probe.o"
  objs=()
  for o in "$B"/*.o; do [ "$(basename "$o")" = gguf_cpp.o ] || objs+=("$o"); done
  c++ -o "$P/gguf-mainline-probe" "${objs[@]}" "$P/gguf_probe.o" -lpthread -lm
  echo "$stamp" > "$P/stamp"
fi
echo "instrumented gguf.cpp (llama-cpp-python $PIN): $n probe points, same line numbers"
fail=0
python3 scripts/mainline_lines.py --driver "$P/gguf-mainline-probe" --corpus "${CORPUS:-conformance}" --tsv "$OUT/mainline-lines.tsv" || fail=1

# Negative controls: each must fail on exactly the edited case.
neg() { # case python-edit
  local case=$1 edit=$2 spec=$P/neg-$1.json
  python3 - "$spec" "$case" "$edit" <<'PY'
import json, sys
g = json.load(open("spec/gguf.json"))
row = [r for r in g["rule_layers"]["cases"] if r["case"] == sys.argv[2]]
assert len(row) == 1, sys.argv[2]
k, v = sys.argv[3].split("=", 1)
assert row[0][k] != v
row[0][k] = v
json.dump(g, open(sys.argv[1], "w"))
PY
  local got
  got=$(python3 scripts/mainline_lines.py --driver "$P/gguf-mainline-probe" --corpus "${CORPUS:-conformance}" --spec "$spec" 2>&1 \
        | sed -n 's/^FAIL \([^ ]*\) .*/\1/p' | sort -u | paste -sd,) || true
  if [ "$got" = "$case" ]; then echo "negative control: $case with $edit fails, nothing else does"
  else echo "DEVIATION: negative control $case with $edit: failing cases '$got'"; fail=1; fi
}
neg type_minus_1 'where=ggml/src/gguf.cpp:740-741'
neg size_past_eof 'layer=recommended'
echo "mainline lines: $([ $fail = 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - t0 ))s"
exit $fail
