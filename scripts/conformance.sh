#!/usr/bin/env bash
# Conformance gate (conformance/PROTOCOL.md): exits non-zero on any deviation.
#  1. regenerate the corpus into a temp dir and byte-compare with conformance/
#  2. check-reader for every adapter with its capabilities and known failures
#     (ref: 100 %; gguf_py: every supported case, known failures exactly; py_ninfer: all its cases)
#  3. stub meta-test: every stub reader fails exactly its non-empty expected set
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
fail=0
step() { printf '\n== %s\n' "$*"; }

step "1. regenerate and byte-compare"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$B" corpus generate -o "$tmp" | tail -n +1
for p in MANIFEST.json codec gguf ninfer pack verify kernel; do
  if ! diff -rq "$tmp/$p" "conformance/$p"; then
    echo "DEVIATION: conformance/$p differs from a fresh generation"; fail=1
  fi
done
[ $fail = 0 ] && echo "corpus regenerates byte-identical"

run() { # name adapter [extra args...]
  local name=$1 adapter=$2; shift 2
  step "check-reader $name"
  if "$B" check-reader --adapter "$adapter" --jobs "$JOBS" --quiet --json "$OUT/$name.json" "$@"; then :; else
    echo "DEVIATION: $name"; fail=1
  fi
}

step "2. readers"
A=conformance/adapters
run ref "$B reader-adapter" --capabilities $A/ref/capabilities.json
run gguf_py $A/gguf_py/adapter.sh --capabilities $A/gguf_py/capabilities.json \
  --known-failures $A/gguf_py/known-failures.txt --timeout 10
run py_ninfer $A/py_ninfer/adapter.sh --capabilities $A/py_ninfer/capabilities.json

step "3. stub meta-test (each stub must fail exactly its expected, non-empty set)"
for s in accept_all reject_all crash garbage flip_trit no_perm scale_at_0 drop_high ptq1_sequential; do
  exp=$A/stubs/$s.expected
  n=$(grep -cv '^\s*\(#\|$\)' "$exp" || true)
  if [ "${n:-0}" -eq 0 ]; then echo "DEVIATION: $exp is empty"; fail=1; continue; fi
  caps=()
  case $s in flip_trit|no_perm|scale_at_0|drop_high|ptq1_sequential) caps=(--capabilities $A/py_ninfer/capabilities.json);; esac
  if "$B" check-reader --adapter $A/stubs/$s.sh --jobs "$JOBS" --quiet --timeout 10 \
      --known-failures "$exp" "${caps[@]}" --json "$OUT/stub_$s.json" > "$OUT/stub_$s.log" 2>&1; then
    echo "stub $s: fails its $n expected cases, nothing else"
  else
    echo "DEVIATION: stub $s"; grep -E '^(FAIL|STALE)|known-failures names' "$OUT/stub_$s.log" | head -20; fail=1
  fi
done

if [ $MATRIX = 1 ]; then
  "$B" corpus matrix --run ref="$OUT/ref.json" --run gguf_py="$OUT/gguf_py.json" \
    --run py_ninfer="$OUT/py_ninfer.json" -o "$OUT/matrix.md"
  echo "matrix: $OUT/matrix.md"
fi

step "conformance: $([ $fail = 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - t0 ))s"
exit $fail
