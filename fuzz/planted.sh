#!/usr/bin/env bash
# The planted-bug benchmark: how long each fuzz target takes to find each parser bug planted
# in src/planted.rs (dormant behind the `planted-bugs` feature; NINFER_PLANTED_BUG wakes one).
# Results and commands: fuzz/RESULTS.md.
#
#   fuzz/planted.sh [--config C] [--budget S] [--runs N] [--bugs a,b] [--jobs J] [--first-target]
#   fuzz/planted.sh --verify     # every witness crashes its bug's build, and passes with no bug woken
#   fuzz/planted.sh --ci         # CI: the two quickest bugs, one run each, then --verify; exit 1 on a miss
#   fuzz/planted.sh --list       # bug, targets
#
# Configurations (--config, default structure):
#   bytes      libFuzzer's byte mutator alone (NINFER_FUZZ_MUTATOR=bytes), no dictionary, the
#              committed seeds without the boundary-* ones: the harness before the mutators
#   structure  the structure-aware mutators and the dictionary, same seeds (no boundary-*)
#   full       structure + dictionary + every committed seed, boundary-* included
# A run ends at the first crash or OOM file (a find; a timeout file only for the hang bug) or
# after --budget seconds (a miss). Each (bug, target) is run --runs times with libFuzzer -seed=1..N; the table gives
# finds/runs, the median and worst seconds (a miss counts as more than the budget), the
# median executions to the find, and "seed" when a committed seed alone triggers the bug.
# The build (cargo fuzz build --features planted-bugs, -s none --release -a) goes to
# fuzz/target-planted/, runs to fuzz/planted-runs/ (both git-ignored).
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$FUZZ_DIR")"
cd "$FUZZ_DIR"

CONFIG=structure BUDGET=600 RUNS=3 BUGS="" JOBS=1 MODE=bench FIRST=0
# The two bugs CI runs (the quickest of fuzz/RESULTS.md under the structure configuration).
CI_BUGS="gguf_dims3_mul_wraps,ninfer_name_255_buffer"
while [ $# -gt 0 ]; do
    case "$1" in
        --config) CONFIG="$2"; shift 2 ;;
        --budget) BUDGET="$2"; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --bugs) BUGS="$2"; shift 2 ;;
        --jobs) JOBS="$2"; shift 2 ;;
        --first-target) FIRST=1; shift ;;
        --verify) MODE=verify; shift ;;
        --ci) MODE=ci; shift ;;
        --list) MODE=list; shift ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
case "$CONFIG" in bytes|structure|full) ;; *) echo "--config must be bytes, structure or full" >&2; exit 2 ;; esac

# "bug<TAB>target target ..." for every entry of BUGS in src/planted.rs (the one list).
bug_table() {
    awk '/name: "/ { sub(/.*name: "/, ""); sub(/".*/, ""); name = $0 }
         /targets: &\[/ { t = $0; sub(/.*&\[/, "", t); sub(/\].*/, "", t); gsub(/[",]/, " ", t);
                          gsub(/  +/, " ", t); sub(/^ /, "", t); sub(/ $/, "", t); print name "\t" t }' \
        "$ROOT/src/planted.rs"
}

if [ "$MODE" = list ]; then bug_table; exit 0; fi

max_len() {
    awk -v t="$1" '/^\[/ { in_table = ($0 == "[package.metadata.fuzz-max-len]") }
         in_table && $1 == t && $2 == "=" { print $3; found = 1; exit }
         END { if (!found) print 4096 }' "$FUZZ_DIR/Cargo.toml"
}

echo "== building the planted-bugs fuzz binaries (fuzz/target-planted)" >&2
# Start from the normal fuzz build's dependencies when there is one (features differ only for
# the workspace crates, so the rest is reused).
if [ ! -d "$FUZZ_DIR/target-planted" ] && [ -d "$FUZZ_DIR/target" ]; then
    cp -a "$FUZZ_DIR/target" "$FUZZ_DIR/target-planted"
fi
nice -n 19 cargo fuzz build -s none --release -a --features planted-bugs --target-dir "$FUZZ_DIR/target-planted" >&2
TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
BIN_DIR="$FUZZ_DIR/target-planted/$TRIPLE/release"
RUN_DIR="$FUZZ_DIR/planted-runs"
mkdir -p "$RUN_DIR"

# Every witness (fuzz/planted/witness/<bug>, a find of an earlier run) must crash the build
# with its bug woken and pass with none: the bug is real and the real parser handles the input.
verify() {
    local fails=0 bug targets t w rc
    while IFS=$'\t' read -r bug targets; do
        t="${targets%% *}"
        w="$FUZZ_DIR/planted/witness/$bug"
        if [ ! -f "$w" ]; then echo "MISSING witness for $bug ($w)"; fails=$((fails + 1)); continue; fi
        rc=0; NINFER_PLANTED_BUG="$bug" "$BIN_DIR/$t" -runs=1 -timeout=5 -rss_limit_mb=2048 "$w" >/dev/null 2>&1 || rc=$?
        if [ $rc = 0 ]; then echo "FAIL $bug: its witness does not crash $t with the bug woken"; fails=$((fails + 1)); fi
        rc=0; "$BIN_DIR/$t" -runs=1 -timeout=5 -rss_limit_mb=2048 "$w" >/dev/null 2>&1 || rc=$?
        if [ $rc != 0 ]; then echo "FAIL $bug: its witness fails $t with no bug woken (exit $rc)"; fails=$((fails + 1)); fi
        [ $rc = 0 ] && echo "ok   $bug: witness crashes $t with the bug, passes without"
    done < <(bug_table)
    return $fails
}

if [ "$MODE" = verify ]; then verify; exit $?; fi
if [ "$MODE" = ci ]; then BUGS="$CI_BUGS" RUNS=1 BUDGET=120 CONFIG=structure; fi

# Seeds without the boundary-* files (for bytes and structure), made once per target.
seeds_for() {
    local t="$1"
    if [ "$CONFIG" = full ]; then echo "$FUZZ_DIR/seeds/$t"; return; fi
    local d="$RUN_DIR/seeds-base/$t"
    if [ ! -d "$d" ]; then
        mkdir -p "$d"
        find "$FUZZ_DIR/seeds/$t" -maxdepth 1 -type f ! -name 'boundary-*' -exec cp {} "$d/" \;
    fi
    echo "$d"
}

# One run: prints "config bug target run found seconds execs phase".
run_one() {
    local bug="$1" t="$2" run="$3"
    local d="$RUN_DIR/$CONFIG/$bug/$t/$run"
    rm -rf "$d"; mkdir -p "$d/corpus" "$d/art"
    # A slow execution is not a find: -timeout leaves room for pack_nano (one execution packs,
    # unpacks and verifies a model) on a loaded machine; only a bug whose name says "hang" is
    # found by a timeout file.
    local tmo=10
    [ "$t" = pack_nano ] && tmo=60
    local args=(-seed="$run" -max_total_time="$BUDGET" -timeout="$tmo" -rss_limit_mb=2048
        -max_len="$(max_len "$t")" -print_final_stats=1 -artifact_prefix="$d/art/")
    local env=(NINFER_PLANTED_BUG="$bug")
    if [ "$CONFIG" = bytes ]; then
        env+=(NINFER_FUZZ_MUTATOR=bytes)
    elif [ -f "$FUZZ_DIR/dict/$t.dict" ]; then
        args+=(-dict="$FUZZ_DIR/dict/$t.dict")
    fi
    local start end
    start=$(date +%s.%N)
    env "${env[@]}" timeout $((BUDGET + 60)) nice -n 19 "$BIN_DIR/$t" "${args[@]}" "$d/corpus" "$(seeds_for "$t")" >"$d/log" 2>&1 || true
    end=$(date +%s.%N)
    local found=0 phase=fuzz execs
    local kinds=(-name 'crash-*' -o -name 'oom-*')
    case "$bug" in *hang*) kinds+=(-o -name 'timeout-*') ;; esac
    if find "$d/art" -type f \( "${kinds[@]}" \) | grep -q .; then found=1; fi
    # A find before libFuzzer's INITED line came from a seed, not from a mutation.
    if [ $found = 1 ] && ! grep -q 'INITED' "$d/log"; then phase=seed; fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log" | tail -1)
    [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$d/log" | tail -1 | tr -d '#')
    printf '%s %s %s %s %s %.1f %s %s\n' "$CONFIG" "$bug" "$t" "$run" "$found" \
        "$(echo "$end - $start" | bc)" "${execs:-0}" "$phase"
}
export -f run_one seeds_for max_len
export CONFIG BUDGET RUN_DIR BIN_DIR FUZZ_DIR

plan="$RUN_DIR/plan-$CONFIG.txt"
: >"$plan"
while IFS=$'\t' read -r bug targets; do
    if [ -n "$BUGS" ] && ! echo ",$BUGS," | grep -q ",$bug,"; then continue; fi
    [ "$FIRST" = 1 ] && targets="${targets%% *}"
    for t in $targets; do
        for run in $(seq 1 "$RUNS"); do echo "$bug $t $run" >>"$plan"; done
    done
done < <(bug_table)
[ -s "$plan" ] || { echo "no bug selected (--bugs $BUGS; see --list)" >&2; exit 2; }

results="$RUN_DIR/results-$CONFIG.txt"
echo "== $(wc -l <"$plan") runs, config $CONFIG, budget ${BUDGET}s, $JOBS at a time" >&2
xargs -P "$JOBS" -L1 bash -c 'run_one "$@"' _ <"$plan" | tee "$results" >&2

# The table: per (bug, target), finds/runs, median and worst seconds, median execs.
echo
echo "| bug | target | config | found | median s | worst s | median execs | note |"
echo "|---|---|---|---|---|---|---|---|"
sort -k2,2 -k3,3 -k4,4n "$results" | awk -v budget="$BUDGET" '
    function flush() {
        if (key == "") return
        n = split(secs, s, " "); split(execs, e, " ")
        # sort seconds (a miss = budget + 1) and execs ascending
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
            if (s[j] + 0 < s[i] + 0) { x = s[i]; s[i] = s[j]; s[j] = x }
            if (e[j] + 0 < e[i] + 0) { x = e[i]; e[i] = e[j]; e[j] = x }
        }
        m = int((n + 1) / 2)
        med = (s[m] > budget) ? ">" budget : s[m]; worst = (s[n] > budget) ? ">" budget : s[n]
        printf "| %s | %s | %s | %d/%d | %s | %s | %s | %s |\n", bug, tgt, cfg, found, n, med, worst, (found ? e[m] : "-"), note
    }
    { k = $2 " " $3
      if (k != key) { flush(); key = k; bug = $2; tgt = $3; cfg = $1; found = 0; secs = ""; execs = ""; note = "" }
      found += $5; secs = secs " " ($5 ? $6 : budget + 1); execs = execs " " ($5 ? $7 : 0)
      if ($8 == "seed") note = "found by a seed" }
    END { flush() }'

missed=$(awk '$5 == 0' "$results" | wc -l)
if [ "$MODE" = ci ]; then
    if [ "$missed" -gt 0 ]; then echo "FAIL: $missed CI run(s) missed their planted bug" >&2; exit 1; fi
    verify
fi
