#!/usr/bin/env bash
# Conformance gate (conformance/PROTOCOL.md): exits non-zero on any deviation.
#  1. regenerate the corpus into a temp dir and byte-compare with conformance/
#  2. check-reader for every adapter with its capabilities and known failures
#     (ref: 100 %; gguf_py: every supported case, known failures exactly; py_ninfer: all its cases);
#     ref, gguf_py and py_ninfer declare "persistent": true and run persistent (PROTOCOL.md §4.6)
#  2b. the same three once more with --per-case: every case's status must equal the persistent run's
#  3. strict = mainline: llama.cpp gguf.cpp (scripts/setup-mainline.sh, pinned) over every GGUF
#     case it supports, no_alloc=true and false; the run fails when mainline disagrees with a case
#     of rule layer 'mainline' beyond the recorded known failures; negative control: the same run
#     on a copy whose n_bool_2 is relabelled 'mainline' must fail on exactly that case
#  3b. scripts/mainline-lines.sh: every GGUF n_ case through an instrumented gguf.cpp (both
#     no_alloc modes) and the loader's bounds check; each rule layer re-derived, each refusal's
#     cited gguf.cpp line must be the first probe line hit; negative controls (wrong line, wrong layer)
#  3c. scripts/encoders-vs-mainline.sh: Q8_0/Q1_0/Q2_0-g64/TQ1_0/TQ2_0 encoders byte-equal to the
#     pinned ggml quantize_row_*_ref (identical decode where amax is an f32 subnormal)
#  4. stub meta-test: every stub reader fails exactly its non-empty expected set
# Options: --matrix  also re-render conformance/INTEROP.md from this run.
#          JOBS=N    parallel adapter processes (default: CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
MATRIX=0
[ "${1:-}" = "--matrix" ] && MATRIX=1
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-target/conformance}
mkdir -p "$OUT"
cargo build --release --quiet
B=$PWD/target/release/ninfer-ternary
[ -x .venv/bin/python ] || bash scripts/setup-python.sh
bash scripts/setup-mainline.sh
fail=0
step() { printf '\n== %s\n' "$*"; }

step "1. regenerate and byte-compare"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$B" corpus generate -o "$tmp" | tail -n +1
for p in MANIFEST.json codec gguf ninfer pack verify kernel boundaries; do
  if ! diff -rq "$tmp/$p" "conformance/$p"; then
    echo "DEVIATION: conformance/$p differs from a fresh generation"; fail=1
  fi
done
[ $fail = 0 ] && echo "corpus regenerates byte-identical"

run() { # name adapter [extra args...]
  local name=$1 adapter=$2; shift 2
  step "check-reader $name"
  if "$B" check-reader --adapter "$adapter" --jobs "$JOBS" --quiet --json "$OUT/$name.json" --force "$@"; then :; else
    echo "DEVIATION: $name"; fail=1
  fi
}

step "2. readers"
A=conformance/adapters
run ref "$B reader-adapter" --capabilities $A/ref/capabilities.json
run gguf_py $A/gguf_py/adapter.sh --capabilities $A/gguf_py/capabilities.json \
  --known-failures $A/gguf_py/known-failures.txt --timeout 10
run py_ninfer $A/py_ninfer/adapter.sh --capabilities $A/py_ninfer/capabilities.json

step "2b. persistent mode = one process per case (PROTOCOL.md §4.6)"
for name in ref gguf_py py_ninfer; do
  case $name in
    ref) adapter="$B reader-adapter"; extra=();;
    gguf_py) adapter=$A/gguf_py/adapter.sh; extra=(--known-failures $A/gguf_py/known-failures.txt --timeout 10);;
    py_ninfer) adapter=$A/py_ninfer/adapter.sh; extra=();;
  esac
  "$B" check-reader --adapter "$adapter" --jobs "$JOBS" --quiet --per-case --capabilities $A/$name/capabilities.json \
    "${extra[@]}" --json "$OUT/$name.per_case.json" --force > "$OUT/$name.per_case.log" 2>&1 || true
  if python3 - "$OUT/$name.json" "$OUT/$name.per_case.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sa = {r["id"]: r["status"] for r in a["results"]}
sb = {r["id"]: r["status"] for r in b["results"]}
diff = sorted(i for i in sa.keys() | sb.keys() if sa.get(i) != sb.get(i))
for i in diff[:20]:
    print(f"  {i}: persistent {sa.get(i)}, per-case {sb.get(i)}")
print(f"{len(sa)} cases compared")
sys.exit(1 if diff or not sa else 0)
PY
  then echo "$name: persistent and per-case runs agree"
  else echo "DEVIATION: $name persistent and per-case results differ"; fail=1; fi
  grep -h '^check-reader:' "$OUT/$name.per_case.log" || true
done

step "3. strict = mainline (llama.cpp gguf.cpp; PROTOCOL.md §6.1)"
run mainline $A/mainline/adapter.sh --capabilities $A/mainline/capabilities.json \
  --known-failures $A/mainline/known-failures.txt --timeout 10
run mainline_alloc $A/mainline_alloc/adapter.sh --capabilities $A/mainline_alloc/capabilities.json \
  --known-failures $A/mainline_alloc/known-failures.txt --timeout 10
# Negative control: a case mainline accepts, relabelled as a 'mainline' rule, must fail the step.
neg=$tmp/negative-control; mkdir -p "$neg"; cp -r conformance/gguf "$neg/gguf"
python3 - conformance/MANIFEST.json "$neg/MANIFEST.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
hit = [c for c in m["cases"] if c["id"] == "gguf/n_bool_2" and c.get("rule_layer") == "recommended"]
assert len(hit) == 1, "negative control: gguf/n_bool_2 is no longer a 'recommended' case"
hit[0]["rule_layer"] = "mainline"
json.dump(m, open(sys.argv[2], "w"))
PY
if "$B" check-reader --corpus "$neg" --adapter $A/mainline/adapter.sh --filter 'gguf/n_bool_2' \
    --capabilities $A/mainline/capabilities.json --quiet > "$OUT/mainline_negative.log" 2>&1; then
  echo "DEVIATION: the mainline step passes a case relabelled 'mainline' that gguf.cpp accepts"; fail=1
elif grep -q '^FAIL  gguf/n_bool_2 ' "$OUT/mainline_negative.log"; then
  echo "negative control: relabelling gguf/n_bool_2 as a 'mainline' rule fails the mainline step"
else
  echo "DEVIATION: the negative control failed for another reason"; cat "$OUT/mainline_negative.log"; fail=1
fi

step "3b. rule layers re-derived by running mainline; every refusal's cited gguf.cpp line proven (instrumented build)"
if ! OUT="$OUT" bash scripts/mainline-lines.sh; then echo "DEVIATION: mainline lines (scripts/mainline-lines.sh)"; fail=1; fi

step "3c. encoders = the owner's quantize_row_*_ref for the mainline-owned formats (spec/codecs.md#quantizer-edge-inputs)"
if ! bash scripts/encoders-vs-mainline.sh; then echo "DEVIATION: encoders vs mainline (scripts/encoders-vs-mainline.sh)"; fail=1; fi

step "4. stub meta-test (each stub must fail exactly its expected, non-empty set)"
for s in accept_all reject_all crash garbage flip_trit no_perm scale_at_0 drop_high ptq1_sequential pq2_planar id42_g64; do
  exp=$A/stubs/$s.expected
  n=$(grep -cv '^\s*\(#\|$\)' "$exp" || true)
  if [ "${n:-0}" -eq 0 ]; then echo "DEVIATION: $exp is empty"; fail=1; continue; fi
  caps=()
  case $s in flip_trit|no_perm|scale_at_0|drop_high|ptq1_sequential|pq2_planar) caps=(--capabilities $A/py_ninfer/capabilities.json);;
    id42_g64) caps=(--capabilities $A/ref/capabilities.json --per-case);; esac  # a per-case adapter
  if "$B" check-reader --adapter $A/stubs/$s.sh --jobs "$JOBS" --quiet --timeout 10 \
      --known-failures "$exp" "${caps[@]}" --json "$OUT/stub_$s.json" --force > "$OUT/stub_$s.log" 2>&1; then
    echo "stub $s: fails its $n expected cases, nothing else"
  else
    echo "DEVIATION: stub $s"; grep -E '^(FAIL|STALE|XFAIL-CHANGED)|known-failures names' "$OUT/stub_$s.log" | head -20; fail=1
  fi
done

if [ $MATRIX = 1 ]; then
  "$B" corpus matrix --run ref="$OUT/ref.json" --run gguf_py="$OUT/gguf_py.json" \
    --run py_ninfer="$OUT/py_ninfer.json" --run mainline="$OUT/mainline.json" \
    --run mainline_alloc="$OUT/mainline_alloc.json" -o "$OUT/matrix.md"
  echo "matrix: $OUT/matrix.md"
fi

step "conformance: $([ $fail = 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - t0 ))s"
exit $fail
