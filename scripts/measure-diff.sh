#!/usr/bin/env bash
# `diff` against `cmp` on a 27B-scale pair (issue #34): two PQ2_0 GGUFs of the bonsai-2-27b
# profile (7.2 GB each), first identical, then differing in one byte 100 bytes before the end (so
# `cmp`, which stops at the first difference, reads both files to the end in both cases). The two
# tools are run alternately, 3 rounds each, with both files warm in the page cache (14.4 GB; the
# machine's cache holds them) and the load average of every try printed.
#
#   scripts/measure-diff.sh [DIR]      (DIR default /work/scratch/measure-diff, removed at the end)
set -euo pipefail
B=${B:-target/release/ninfer-ternary}
DIR=${1:-/work/scratch/measure-diff}
mkdir -p "$DIR"
A=$DIR/a.gguf
C=$DIR/b.gguf
trap 'rm -f "$A" "$C"' EXIT

timed() { # timed NAME CMD...: wall seconds, exit code and load
    local name=$1 s e rc; shift
    s=$(date +%s.%N); set +e; "$@" >/dev/null 2>&1; rc=$?; set -e; e=$(date +%s.%N)
    echo "$name: $(echo "$e - $s" | bc)s exit $rc  load: $(uptime | sed 's/.*load average: //')"
}

rounds() { # rounds LABEL
    cat "$A" "$C" >/dev/null
    for i in 1 2 3; do
        timed "$1 cmp  try $i" cmp "$A" "$C"
        timed "$1 diff try $i" "$B" diff "$A" "$C"
    done
}

"$B" synth --profile bonsai-2-27b --format pq2_0 --seed 0 -o "$A" >/dev/null
cp "$A" "$C"
echo "pair: $(stat -c %s "$A") bytes each"
rounds identical
size=$(stat -c %s "$C")
printf '\x5a' | dd of="$C" bs=1 seek=$((size - 100)) conv=notrunc status=none
"$B" diff "$A" "$C" | head -3 || true
rounds one-byte
