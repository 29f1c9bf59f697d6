#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (default 60), one at a time, in one
# process (-jobs=1 -workers=1) under `nice -n 19`. Prints a table per target and exits
# non-zero if any crash-/timeout-/oom-/leak- file exists in fuzz/artifacts/<target>/.
#
#   fuzz/run.sh [SECONDS]            # all targets
#   TARGETS="gguf_parse" fuzz/run.sh 30
#   fuzz/run.sh --list               # print the targets and exit
#
# The targets are the [[bin]] sections of fuzz/Cargo.toml (the one list; the root crate's
# `fuzz_targets` tests check it against the testkit's table, fuzz_targets/ and seeds/), and a
# target's -max_len is its entry in [package.metadata.fuzz-max-len] there (default 4096).
# Corpora grow in fuzz/corpus/<target> (git-ignored), seeded from fuzz/seeds/<target>.
# Logs: fuzz/logs/<target>/fuzz-0.log (git-ignored by fuzz/.gitignore).
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR"

# `name = "..."` of every [[bin]] section, in file order.
all_targets() {
    awk '/^\[/ { in_bin = ($0 == "[[bin]]") }
         in_bin && /^name *=/ { sub(/^name *= *"/, ""); sub(/".*/, ""); print }' "$FUZZ_DIR/Cargo.toml"
}

# The target's entry in [package.metadata.fuzz-max-len], else 4096.
max_len() {
    awk -v t="$1" '/^\[/ { in_table = ($0 == "[package.metadata.fuzz-max-len]") }
         in_table && $1 == t && $2 == "=" { print $3; found = 1; exit }
         END { if (!found) print 4096 }' "$FUZZ_DIR/Cargo.toml"
}

if [ "${1:-}" = "--list" ]; then
    all_targets
    exit 0
fi
SECONDS_PER_TARGET="${1:-60}"

if ! command -v cargo-fuzz >/dev/null 2>&1 && ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz missing; installing (cargo install cargo-fuzz --locked)" >&2
    cargo install cargo-fuzz --locked
fi

# Stable toolchain, no sanitizer (ASan needs nightly); -a keeps debug assertions and overflow
# checks on in the optimized build so arithmetic overflow is a finding.
nice -n 19 cargo fuzz build -s none --release -a >&2

TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
BIN_DIR="$FUZZ_DIR/target/$TRIPLE/release"
TARGETS="${TARGETS:-$(all_targets | tr '\n' ' ')}"

findings=0
rows=()
for t in $TARGETS; do
    bin="$BIN_DIR/$t"
    [ -x "$bin" ] || { echo "missing fuzz binary $bin" >&2; exit 2; }
    corpus="$FUZZ_DIR/corpus/$t"
    seeds="$FUZZ_DIR/seeds/$t"
    art="$FUZZ_DIR/artifacts/$t"
    logs="$FUZZ_DIR/logs/$t"
    mkdir -p "$corpus" "$art" "$logs"
    rm -f "$logs"/fuzz-*.log
    echo "== $t: ${SECONDS_PER_TARGET}s" >&2
    start=$(date +%s)
    set +e
    dict="$FUZZ_DIR/dict/$t.dict"
    dict_arg=()
    [ -f "$dict" ] && dict_arg=("-dict=$dict")
    (cd "$logs" && nice -n 19 "$bin" -jobs=1 -workers=1 "${dict_arg[@]}" \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -max_len="$(max_len "$t")" -print_final_stats=1 \
        -artifact_prefix="$art/" "$corpus" "$seeds" >"$logs/driver.log" 2>&1)
    rc=$?
    set -e
    secs=$(( $(date +%s) - start ))
    log="$logs/fuzz-0.log"
    [ -f "$log" ] || log="$logs/driver.log"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
    cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
    corp=$(find "$corpus" -type f | wc -l)
    found=$(find "$art" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    if [ "$found" -gt 0 ] || [ "$rc" -ne 0 ]; then
        findings=$((findings + found))
        [ "$found" -gt 0 ] || findings=$((findings + 1))
        echo "!! $t: libFuzzer exit $rc, $found finding file(s) in $art; see $log" >&2
    fi
    rows+=("$(printf '%-18s %12s %8s %10s %7s %7s %8s %8s %9s' "$t" "${execs:-?}" "$secs" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$corp" "${rss:-?}" "$found")")
done

printf '%-18s %12s %8s %10s %7s %7s %8s %8s %9s\n' target execs seconds execs/s cov ft corpus rss_mb findings
for r in "${rows[@]}"; do echo "$r"; done
if [ "$findings" -gt 0 ]; then
    echo "FAIL: $findings finding(s)" >&2
    exit 1
fi
echo "OK: no findings"
