#!/usr/bin/env bash
# Real-reader matrix (conformance/INTEROP.md): every reader adapter through check-reader with its
# capabilities and known failures, the readers x (families, rule layers) matrix as Markdown and
# HTML, a differential-fuzzing smoke per real reader, and the corpus's mutation score on a subset
# of the py_ninfer reader mutants. Exits non-zero on any deviation: an unexpected failure, a stale
# known failure, committed INTEROP.md matrices that differ from this run's (with a negative
# control: a stale cell must fail), a panic of the reference under diff-fuzz, or a reader mutant
# run that breaks.
# The readers are installed from their registries at pinned versions by scripts/setup-readers.sh.
# Options: --update        also splice the matrices (and, with --full-mutants, the mutation score: conformance/mutation-score.json and its INTEROP.md block)
#                          into conformance/INTEROP.md
#          --full-mutants  run all reader mutants (default: every 6th; the full set takes ~4 min)
#          DIFF_ITERATIONS=N  diff-fuzz mutants per reader (default 60)
#          REUSE=0   rerun ref, py_ninfer and gguf_py even when scripts/conformance.sh just ran them
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
UPDATE=0; EVERY=6
for a in "$@"; do
  case $a in --update) UPDATE=1;; --full-mutants) EVERY=1;; *) echo "unknown option $a"; exit 2;; esac
done
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-target/readers}
mkdir -p "$OUT"
cargo build --release --quiet
B=$PWD/target/release/ninfer-ternary
bash scripts/setup-readers.sh
A=conformance/adapters
fail=0
step() { printf '\n== %s (t+%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }

# name adapter-command [extra check-reader args]
readers=(
  "ref|$B reader-adapter|"
  "py_ninfer|$A/py_ninfer/adapter.sh|"
  "gguf_py|$A/gguf_py/adapter.sh|--timeout 10"
  "hf_gguf|$A/hf_gguf/adapter.sh|"
  "gguf_inspect|$A/gguf_inspect/adapter.sh|"
  "candle|$A/candle/adapter.sh|"
)
matrix_args=()
step "check-reader per reader"
for r in "${readers[@]}"; do
  IFS='|' read -r name adapter extra <<<"$r"
  # .ci/run runs scripts/conformance.sh first: reuse its runs of the in-repo readers when they
  # are newer than the manifest (same command, same capabilities and known failures).
  prev=target/conformance/$name.json
  if [ "${REUSE:-1}" = 1 ] && [ -f "$prev" ] && [ "$prev" -nt conformance/MANIFEST.json ] \
      && [ "$(realpath -m "$prev")" != "$(realpath -m "$OUT/$name.json")" ] \
      && case $name in ref|py_ninfer|gguf_py) true;; *) false;; esac; then
    cp "$prev" "$OUT/$name.json"
    echo "$name: reused $prev ($(grep -o '"passed": [0-9]*' "$prev" | head -1))"
    matrix_args+=(--run "$name=$OUT/$name.json" --caps "$name=$A/$name/capabilities.json")
    continue
  fi
  args=(--capabilities "$A/$name/capabilities.json")
  [ -f "$A/$name/known-failures.txt" ] && args+=(--known-failures "$A/$name/known-failures.txt")
  # shellcheck disable=SC2086
  if "$B" check-reader --adapter "$adapter" --jobs "$JOBS" --quiet --json "$OUT/$name.json" --force "${args[@]}" $extra \
      > "$OUT/$name.log" 2>&1; then
    echo "$name: $(grep -E '^[0-9]+ passed' "$OUT/$name.log" | head -1)"
  else
    echo "DEVIATION: $name"; grep -E '^(FAIL|STALE|XFAIL-CHANGED)|known-failures names|RESULT' "$OUT/$name.log" | head -20; fail=1
  fi
  matrix_args+=(--run "$name=$OUT/$name.json" --caps "$name=$A/$name/capabilities.json")
done

step "matrix"
"$B" corpus matrix "${matrix_args[@]}" -o "$OUT/matrix.md" --html "$OUT/matrix.html" --force  # its own outputs of an earlier run
sed -n '/^## Readers/,/^## Feature/p' "$OUT/matrix.md" | sed '$d'
echo "matrix: $OUT/matrix.md, $OUT/matrix.html"
if [ $UPDATE = 1 ]; then
  "$B" corpus matrix "${matrix_args[@]}" --splice conformance/INTEROP.md
  echo "spliced into conformance/INTEROP.md"
fi

step "staleness gate: the committed INTEROP.md matrices must be this run's"
# stale DOC: splices this run's two matrices into a copy of DOC; non-zero when the copy differs.
stale() {
  local copy=$OUT/$(printf '%s' "$1" | tr / _).fresh
  cp "$1" "$copy"
  "$B" corpus matrix "${matrix_args[@]}" --splice "$copy" || return 2
  diff -u "$1" "$copy" > "$copy.diff"
}
if stale conformance/INTEROP.md; then
  echo "conformance/INTEROP.md: reader and group matrices equal this run's"
else
  echo "DEVIATION: conformance/INTEROP.md is stale (run scripts/reader-matrix.sh --update); diff:"
  head -40 "$OUT/conformance_INTEROP.md.fresh.diff"; fail=1
fi
# Negative control: the fresh document with one cell edited (the first 'N pass' of the reader
# matrix incremented) must fail the same gate.
mkdir -p "$OUT/stale"
awk '/<!-- BEGIN reader-matrix -->/{m=1} m && !done && match($0, /[0-9]+ pass/) {
       n = substr($0, RSTART, RLENGTH - 5) + 1
       $0 = substr($0, 1, RSTART - 1) n " pass" substr($0, RSTART + RLENGTH); done = 1 } {print}' \
  "$OUT/conformance_INTEROP.md.fresh" > "$OUT/stale/INTEROP.md"
if cmp -s "$OUT/conformance_INTEROP.md.fresh" "$OUT/stale/INTEROP.md"; then
  echo "DEVIATION: negative control: the stale edit changed nothing"; fail=1
else
  rc=0; stale "$OUT/stale/INTEROP.md" || rc=$?
  if [ $rc != 1 ]; then echo "DEVIATION: negative control: a stale matrix cell does not fail the gate (rc $rc)"; fail=1
  else echo "negative control: a stale matrix cell fails the gate ($(grep -c '^[-+]|' "$OUT/$(printf '%s' "$OUT/stale/INTEROP.md" | tr / _).fresh.diff") changed table lines)"; fi
fi

step "differential fuzzing smoke (seed 1, ${DIFF_ITERATIONS:-60} mutants per reader)"
for r in hf_gguf gguf_inspect gguf_py candle; do
  extra=()
  [ $r = candle ] && extra=(--outcome-only)  # candle cannot report file order
  "$B" corpus diff-fuzz --adapter "$A/$r/adapter.sh" --capabilities "$A/$r/capabilities.json" \
    --seed 1 --iterations "${DIFF_ITERATIONS:-60}" "${extra[@]}" -o "$OUT/diff-$r" --force | sed "s/^/$r: /" \
    || { echo "DEVIATION: diff-fuzz against $r stopped early (see above)"; fail=1; }
  if grep -q '"kind": "reference-\(panic\|timeout\)"' "$OUT/diff-$r/candidates.json"; then
    echo "DEVIATION: the reference panicked or missed its deadline under diff-fuzz ($OUT/diff-$r/candidates.json)"; fail=1
  fi
done

step "reader mutants (every ${EVERY}th of the py_ninfer framing/codec mutants)"
splice=()
[ $UPDATE = 1 ] && [ "$EVERY" = 1 ] && splice=(--record conformance/mutation-score.json --splice conformance/INTEROP.md)
if ! .venv/bin/python scripts/reader_mutants.py --bin "$B" --every "$EVERY" --json "$OUT/mutants.json" \
    "${splice[@]}" > "$OUT/mutants.log" 2>&1; then
  echo "DEVIATION: reader_mutants.py"; tail -20 "$OUT/mutants.log"; fail=1
fi
sed -n '/^mutation score/,$p' "$OUT/mutants.log"

step "reader matrix: $([ $fail = 0 ] && echo PASSED || echo FAILED) in $(( $(date +%s) - t0 ))s"
exit $fail
