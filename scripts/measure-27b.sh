#!/usr/bin/env bash
# measure-27b.sh — full-scale timings (synthetic bonsai-2-27b, PQ2_0) of `verify --template
# --sweep` and `unpack`, each next to the machine bound measured in the same minute, printed as
# one Markdown table (docs/verify-measurements.md records its runs).
# (synth, synth-template and pack vs cp: scripts/measure-synth-27b.sh.)
#
# Usage: scripts/measure-27b.sh [--dir DIR] [--bin PATH] [--runs N] [--cold | --cold-runs N] [--pack] [--scratch DIR]
# Every timed command must exit 0 (verify must also print RESULT: PASSED), else the script aborts.
#   --dir DIR      holds m27.gguf, t27.ninfer, a27.ninfer (default /work/big); a missing file is
#                  generated there with the release binary (synth --profile bonsai-2-27b --format
#                  pq2_0; synth-template; pack), which takes minutes and ~33 GB of disk.
#   --bin PATH     the binary (default target/release/ninfer-ternary; built if absent).
#   --runs N       warm repetitions, best taken (default 3).
#   --cold         also one cold-cache verify: drops the page cache (root; `sync; echo 3 >
#                  /proc/sys/vm/drop_caches` evicts EVERY process's cache), measures the disk with
#                  a cold `dd` of the artifact, drops again and runs verify; the bound is the bytes
#                  verify made the kernel read from disk (getrusage inblock x 512) at dd's rate.
#   --cold-runs N  N cold verifies, each between two cold dd reads (bound: the mean rate of the
#                  dd before and after it); --cold is --cold-runs 1.
#   --pack         also time `pack` (GGUF + template into --scratch, ~8 GB written, deleted
#                  at once), `cp` of its output and a `dd oflag=direct` copy of it; the bound is
#                  1.2 x the faster copy (issue #14 names cp; pack writes around the page cache).
#   --scratch DIR  where `cp` and --pack write its copy of the artifact (default DIR; deleted at once).
#
# Rows (measured = best wall of the runs; CPU s = its user + sys; disk MB = what it read from
# disk, getrusage inblock: a "warm" run with a large number was not warm; load = 1-minute load
# average before the best run):
#   cp artifact      the pack bound: pack must stay <= 1.2x of it (no ratio here; pack's own row
#                    is added by whoever measures pack — add a measure_* function and a row call).
#   dd warm          page-cache read of verify's payload bytes from the artifact (1 core, with copy).
#   verify warm      bound = verify's payload bytes read / dd warm's rate (the "memory" bound of a
#                    one-core copy; verify hashes on every core without copying).
#   verify cold      (--cold) bound = disk bytes it read / the rate of dd iflag=direct (mean of the dd
#                    before and after it); a last cold sample with NINFER_READ=mapped (through the
#                    maps, as before src/fsio/bulk.rs) is judged against the last dd.
#   unpack warm      bound = the bytes it compares (rebuilt + source: 2 x rebuilt) / dd warm's rate.
# Timings are noisy on a shared machine: read the load column. One function per measured command;
# each appends a row with `row NAME MEASURED_S BOUND_S BOUND_DESC GBPS LOAD`.
set -euo pipefail

DIR=/work/big
BIN=target/release/ninfer-ternary
RUNS=3
COLD=0
COLD_RUNS=1
PACK=0
SCRATCH=
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --cold) COLD=1; shift ;;
    --cold-runs) COLD=1; COLD_RUNS=$2; shift 2 ;;
    --pack) PACK=1; shift ;;
    --scratch) SCRATCH=$2; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "measure-27b.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
SCRATCH=${SCRATCH:-$DIR}
GGUF=$DIR/m27.gguf TPL=$DIR/t27.ninfer ART=$DIR/a27.ninfer
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; rm -f "$SCRATCH/.measure-27b-cp.$$" "$SCRATCH/.measure-27b-pack.$$.ninfer"' EXIT

[ -x "$BIN" ] || cargo build --release
mkdir -p "$DIR"
[ -f "$GGUF" ] || "$BIN" synth --profile bonsai-2-27b --format pq2_0 -o "$GGUF"
[ -f "$TPL" ] || "$BIN" synth-template --profile bonsai-2-27b -o "$TPL"
[ -f "$ART" ] || "$BIN" pack --gguf "$GGUF" --template "$TPL" -o "$ART"

ROWS=()
load() { cut -d' ' -f1 /proc/loadavg; }
# row NAME MEASURED BOUND BOUND_DESC GBPS LOAD [TIMEFILE] (BOUND "-" for none). TIMEFILE (a
# `timed` output) adds the run's CPU seconds (user + sys) and the MB it read from disk.
row() {
  local ratio=- bound=-
  if [ "$3" != - ]; then
    ratio=$(awk -v m="$2" -v b="$3" 'BEGIN { printf "%.2f", m / b }')
    bound="$3 s"
  fi
  local cpu=- disk=-
  if [ -n "${7:-}" ]; then
    cpu=$(awk '{ printf "%.2f", $2 + $3 }' "$7")
    disk=$(awk '{ printf "%.0f", $4 * 512 / 1e6 }' "$7")
  fi
  ROWS+=("| $1 | $2 s | $bound | $4 | $ratio | $5 | $cpu | $disk | $6 |")
}
# die MSG: aborts the whole measurement (no row is recorded for a command that failed).
die() { echo "measure-27b.sh: $*" >&2; exit 1; }
# timed OUT CMD...: runs CMD (stdout to OUT.out, stderr to OUT.err) under GNU time; OUT gets
# "wall user sys inblocks". Aborts unless CMD exits 0, and, for verify, unless its report says
# "RESULT: PASSED" (a failed verify or unpack is never timed as if it had done the work).
timed() {
  local out=$1; shift
  local rc=0
  /usr/bin/time -f "%e %U %S %I" -o "$out" "$@" >"$out.out" 2>"$out.err" || rc=$?
  [ "$rc" = 0 ] || die "'$*' exited $rc (stderr: $(tail -3 "$out.err" | tr '\n' ' '))"
  local a is_verify=0
  for a in "$@"; do [ "$a" = verify ] && is_verify=1; done
  if [ "$is_verify" = 1 ] && ! grep -q '^RESULT: PASSED' "$out.out"; then
    die "'$*' did not print RESULT: PASSED"
  fi
  return 0
}
# best NAME CMD...: RUNS runs of CMD; sets BEST_S, BEST_LOAD, BEST_ERR (the best run's stderr).
best() {
  local name=$1; shift
  BEST_S=; BEST_LOAD=; BEST_ERR=; BEST_TIME=
  for i in $(seq "$RUNS"); do
    local l; l=$(load)
    timed "$TMP/$name.$i" "$@"
    local w; w=$(cut -d' ' -f1 "$TMP/$name.$i")
    if [ -z "$BEST_S" ] || awk -v a="$w" -v b="$BEST_S" 'BEGIN { exit !(a < b) }'; then
      BEST_S=$w BEST_LOAD=$l BEST_ERR="$TMP/$name.$i.err" BEST_TIME="$TMP/$name.$i"
    fi
  done
}
gbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b / s / 1e9 }'; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# pack of the 27B GGUF onto the template into SCRATCH, then `cp` of that output (pack's bound:
# pack must stay <= 1.2x of it). Both outputs are deleted at once.
measure_pack() {
  local out="$SCRATCH/.measure-27b-pack.$$.ninfer"
  best pack "$BIN" pack --gguf "$GGUF" --template "$TPL" -o "$out" --force
  local bytes; bytes=$(stat -c %s "$out")
  local pack_s=$BEST_S pack_load=$BEST_LOAD pack_time=$BEST_TIME
  # pack's output bypassed the page cache: read it once so that the copies read it warm, as
  # pack reads its warm inputs.
  cat "$out" >/dev/null
  # cp + fsync of the copy: pack's output is fsync'ed before its rename (a cp that returns
  # with 8 GB still dirty in the page cache is not the same work).
  best cpp sh -c 'cp "$1" "$2" && sync "$2"' cp "$out" "$SCRATCH/.measure-27b-cp.$$"
  rm -f "$SCRATCH/.measure-27b-cp.$$"
  row "cp + sync of pack's output (pack bound)" "$BEST_S" - "copy, fsync'ed like pack's" "$(gbps "$bytes" "$BEST_S")" "$BEST_LOAD" "$BEST_TIME"
  local cp_s=$BEST_S
  # pack writes around the page cache (src/fsio/output.rs), so a copy that does too is the
  # stricter bound; the pack row is judged against the faster of the two copies.
  best ddcp dd if="$out" of="$SCRATCH/.measure-27b-cp.$$" bs=16M oflag=direct conv=fdatasync status=none
  rm -f "$SCRATCH/.measure-27b-cp.$$"
  row "dd oflag=direct copy of pack's output (pack bound)" "$BEST_S" - "copy around the page cache, fsync'ed" "$(gbps "$bytes" "$BEST_S")" "$BEST_LOAD" "$BEST_TIME"
  local copy_s; copy_s=$(awk -v a="$cp_s" -v b="$BEST_S" 'BEGIN { print (a < b ? a : b) }')
  row "pack m27.gguf + t27.ninfer ($bytes B out)" "$pack_s" "$(awk -v c="$copy_s" 'BEGIN { printf "%.2f", 1.2 * c }')" "1.2 x the faster copy of its output" "$(gbps "$bytes" "$pack_s")" "$pack_load" "$pack_time"
  rm -f "$out"
}

measure_cp() {
  best cp sh -c 'cp "$1" "$2" && sync "$2"' cp "$ART" "$SCRATCH/.measure-27b-cp.$$"
  rm -f "$SCRATCH/.measure-27b-cp.$$"
  local bytes; bytes=$(stat -c %s "$ART")
  row "cp + sync of a27.ninfer" "$BEST_S" - "pack <= 1.2x this" "$(gbps "$bytes" "$BEST_S")" "$BEST_LOAD" "$BEST_TIME"
}

# The payload bytes verify reads (its stats line), from one untimed warm-up run. The warm-up
# reads through the maps (NINFER_READ=mapped), so that it leaves exactly what verify reads in
# the page cache; by default a cold verify reads direct and leaves the cache as it was.
VERIFY=("$BIN" verify "$ART" --gguf "$GGUF" --template "$TPL" --sweep)
verify_bytes() {
  timed "$TMP/vbytes" env NINFER_READ=mapped "${VERIFY[@]}"
  sed -n 's/.*payload bytes read \([0-9]*\).*/\1/p' "$TMP/vbytes.err"
}

measure_dd_warm() {
  local mib=$(( ($1 + (1 << 20) - 1) >> 20 ))
  best dd dd if="$ART" of=/dev/null bs=1M count="$mib"
  DD_WARM_GBPS=$(gbps "$(( mib << 20 ))" "$BEST_S")
  row "dd warm, $mib MiB of a27.ninfer" "$BEST_S" - "page-cache read, 1 core" "$DD_WARM_GBPS" "$BEST_LOAD" "$BEST_TIME"
}

measure_verify_warm() {
  local bytes=$1
  # The unpack warm-up and dd in between may have evicted some of verify's pages: read them
  # back through the maps first, so that the timed runs are warm.
  timed "$TMP/vwarm" env NINFER_READ=mapped "${VERIFY[@]}"
  best verify "${VERIFY[@]}"
  local bound; bound=$(awk -v b="$bytes" -v r="$DD_WARM_GBPS" 'BEGIN { printf "%.2f", b / r / 1e9 }')
  row "verify --template --sweep, warm ($bytes B read)" "$BEST_S" "$bound" "bytes / dd warm rate" "$(gbps "$bytes" "$BEST_S")" "$BEST_LOAD" "$BEST_TIME"
}

measure_verify_cold() {
  # COLD_RUNS samples, each between two dd reads of the whole artifact (dd, verify, dd,
  # verify, ..., dd): the disk's rate on this VM moves by 2x within minutes, so each verify is
  # judged against the mean rate of the dd right before and right after it. The dd reads with
  # iflag=direct: through the page cache it is CPU-bound on this VM (16.7 s wall, 15.7 s of
  # kernel time for 8.16 GB, against 7.5 s direct), which would measure the cache, not the disk.
  drop_caches
  local l; l=$(load)
  timed "$TMP/ddcold.0" dd if="$ART" of=/dev/null bs=16M iflag=direct
  local prev; prev=$(gbps "$(stat -c %s "$ART")" "$(cut -d' ' -f1 "$TMP/ddcold.0")")
  row "dd iflag=direct, all of a27.ninfer" "$(cut -d' ' -f1 "$TMP/ddcold.0")" - "disk read" "$prev" "$l" "$TMP/ddcold.0"
  for i in $(seq "$COLD_RUNS"); do
    drop_caches
    l=$(load)
    timed "$TMP/vcold.$i" "${VERIFY[@]}"
    drop_caches
    local l2; l2=$(load)
    timed "$TMP/ddcold.$i" dd if="$ART" of=/dev/null bs=16M iflag=direct
    local next; next=$(gbps "$(stat -c %s "$ART")" "$(cut -d' ' -f1 "$TMP/ddcold.$i")")
    local w inb; w=$(cut -d' ' -f1 "$TMP/vcold.$i"); inb=$(cut -d' ' -f4 "$TMP/vcold.$i")
    local bytes=$(( inb * 512 ))
    local disk; disk=$(awk -v a="$prev" -v b="$next" 'BEGIN { printf "%.3f", (a + b) / 2 }')
    local bound; bound=$(awk -v b="$bytes" -v r="$disk" 'BEGIN { printf "%.2f", b / r / 1e9 }')
    row "verify --template --sweep, cold #$i ($bytes B from disk)" "$w" "$bound" "disk bytes / mean dd rate before+after ($disk GB/s)" "$(gbps "$bytes" "$w")" "$l" "$TMP/vcold.$i"
    row "dd iflag=direct, all of a27.ninfer" "$(cut -d' ' -f1 "$TMP/ddcold.$i")" - "disk read" "$next" "$l2" "$TMP/ddcold.$i"
    prev=$next
  done
  # One more sample through the maps (NINFER_READ=mapped, the reads before fsio::bulk), judged
  # against the last dd.
  drop_caches
  l=$(load)
  timed "$TMP/vcoldm" env NINFER_READ=mapped "${VERIFY[@]}"
  local w inb; w=$(cut -d' ' -f1 "$TMP/vcoldm"); inb=$(cut -d' ' -f4 "$TMP/vcoldm")
  local bytes=$(( inb * 512 ))
  local bound; bound=$(awk -v b="$bytes" -v r="$prev" 'BEGIN { printf "%.2f", b / r / 1e9 }')
  row "verify --template --sweep, cold, NINFER_READ=mapped ($bytes B from disk)" "$w" "$bound" "disk bytes / the last dd's rate ($prev GB/s)" "$(gbps "$bytes" "$w")" "$l" "$TMP/vcoldm"
}

measure_unpack_warm() {
  best unpack "$BIN" unpack "$ART" --gguf "$GGUF"
  local rebuilt; rebuilt=$(sed -n 's/.*(\([0-9]*\) bytes rebuilt).*/\1/p' "$TMP/unpack.warmup" | head -1)
  rebuilt=${rebuilt:-0}
  local bound=-
  [ "$rebuilt" != 0 ] && bound=$(awk -v b="$rebuilt" -v r="$DD_WARM_GBPS" 'BEGIN { printf "%.2f", 2 * b / r / 1e9 }')
  row "unpack (proof, $rebuilt B rebuilt)" "$BEST_S" "$bound" "2 x rebuilt / dd warm rate" "$(gbps "$(( 2 * rebuilt ))" "$BEST_S")" "$BEST_LOAD" "$BEST_TIME"
}

# Warm-ups first (they fill the page cache), cp after the warm runs (its 8 GB of written pages
# evict cached input), the cold run last.
VBYTES=$(verify_bytes)
timed "$TMP/unpackw" "$BIN" unpack "$ART" --gguf "$GGUF"
cat "$TMP/unpackw.out" "$TMP/unpackw.err" >"$TMP/unpack.warmup"
measure_dd_warm "$VBYTES"
measure_verify_warm "$VBYTES"
measure_unpack_warm
measure_cp
if [ "$PACK" = 1 ]; then measure_pack; fi
if [ "$COLD" = 1 ]; then measure_verify_cold; fi

echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(free -g | awk '/Mem:/ { print $2 }') GiB RAM; $BIN; best of $RUNS warm runs."
echo
echo "| step | measured | bound | bound is | ratio | GB/s | CPU s | disk MB | load |"
echo "|---|---:|---:|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
