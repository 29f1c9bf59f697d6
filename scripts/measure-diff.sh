#!/usr/bin/env bash
# `diff` against `cmp` on 27B-scale pairs (issue #34), side by side, the tools alternated, wall
# seconds and the load average of every try printed.
#
#   scripts/measure-diff.sh [gguf|ninfer] [DIR]   (default gguf; DIR default /work/scratch/measure-diff,
#                                                  its big files removed at the end)
#
# gguf:   two PQ2_0 GGUFs of the bonsai-2-27b profile (7.2 GB each), first identical, then
#         differing in one byte 100 bytes before the end (so `cmp`, which stops at the first
#         difference, reads both files to the end in both cases); 3 rounds each, warm.
# ninfer: two PQ2_0 .ninfer artifacts of the 27B object list (8.2 GB each): `pack` of a `synth`
#         GGUF onto a `synth-template` whose produced payloads are punched out
#         (scripts/punch-produced.py: pack never reads them, so the artifact is the same; the
#         template then keeps ~1 GB on disk instead of 17.5 GB), template and GGUF deleted, the
#         artifact copied. Pairs: identical; one byte 100 bytes before the end; and `mutate
#         --kind swap-two-rows` (cmp stops at the first differing byte, diff reads everything).
#         Each pair warm (both files read first) and cold (both files evicted from the page
#         cache with POSIX_FADV_DONTNEED before every try). Peak disk: ~17.5 GB for a moment
#         (the template before its punch), then ~16.4 GB; the script refuses to start with less
#         than 26 GB free on DIR's file system (8 GB stays free for others).
set -euo pipefail
MODE=${1:-gguf}
B=${B:-target/release/ninfer-ternary}
DIR=${2:-/work/scratch/measure-diff}
ROUNDS=${ROUNDS:-3}
mkdir -p "$DIR"
HERE=$(cd "$(dirname "$0")" && pwd)

timed() { # timed NAME CMD...: wall seconds, exit code and load
    local name=$1 s e rc; shift
    s=$(date +%s.%N); set +e; "$@" >/dev/null 2>&1; rc=$?; set -e; e=$(date +%s.%N)
    echo "$name: $(echo "$e - $s" | bc)s exit $rc  load: $(uptime | sed 's/.*load average: //')"
}

evict() { # evict FILE...: drop the files' pages from the page cache (only theirs)
    python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$@"
}

rounds() { # rounds LABEL: warm tries, then (ninfer mode) cold tries
    cat "$A" "$C" >/dev/null
    for i in $(seq "$ROUNDS"); do
        timed "$1 warm cmp  try $i" cmp "$A" "$C"
        timed "$1 warm diff try $i" "$B" diff "$A" "$C"
    done
    [ "$MODE" = ninfer ] || return 0
    for i in $(seq "$ROUNDS"); do
        evict "$A" "$C"; echo "  resident after evict: $(fincore -nb -o RES "$A" "$C" | tr '\n' ' ')"
        timed "$1 cold cmp  try $i" cmp "$A" "$C"
        evict "$A" "$C"
        timed "$1 cold diff try $i" "$B" diff "$A" "$C"
    done
}

flip_near_end() { # the byte 100 bytes before the end of $C
    local size; size=$(stat -c %s "$C")
    printf '\x5a' | dd of="$C" bs=1 seek=$((size - 100)) conv=notrunc status=none
}

free_gb() { df -BG --output=avail "$DIR" | tail -1 | tr -dc 0-9; }

case "$MODE" in
gguf)
    A=$DIR/a.gguf
    C=$DIR/b.gguf
    trap 'rm -f "$A" "$C"' EXIT
    "$B" synth --profile bonsai-2-27b --format pq2_0 --seed 0 -o "$A" >/dev/null
    cp "$A" "$C"
    echo "pair: $(stat -c %s "$A") bytes each"
    rounds identical
    flip_near_end
    "$B" diff "$A" "$C" | head -3 || true
    rounds one-byte
    ;;
ninfer)
    [ "$(free_gb)" -ge 26 ] || { echo "need 26 GB free on $DIR, have $(free_gb) GB"; exit 2; }
    T=$DIR/t27.ninfer G=$DIR/m27.gguf A=$DIR/a.ninfer C=$DIR/b.ninfer
    trap 'rm -f "$T" "$T.json" "$G" "$A" "$C" "$DIR"/nano.*' EXIT
    # The punch changes nothing pack writes: checked on nano first (whole vs punched template).
    "$B" synth-template -o "$DIR/nano.t.ninfer" >/dev/null
    "$B" synth -o "$DIR/nano.gguf" >/dev/null
    cp "$DIR/nano.t.ninfer" "$DIR/nano.p.ninfer"
    "$B" inspect "$DIR/nano.p.ninfer" --json "$DIR/nano.p.json" >/dev/null
    python3 "$HERE/punch-produced.py" "$DIR/nano.p.json" "$DIR/nano.p.ninfer"
    "$B" pack --gguf "$DIR/nano.gguf" --template "$DIR/nano.t.ninfer" -o "$DIR/nano.a1.ninfer" >/dev/null
    "$B" pack --gguf "$DIR/nano.gguf" --template "$DIR/nano.p.ninfer" -o "$DIR/nano.a2.ninfer" >/dev/null
    cmp "$DIR/nano.a1.ninfer" "$DIR/nano.a2.ninfer" && echo "nano: whole and punched template pack the same bytes"
    rm -f "$DIR"/nano.*
    "$B" synth-template --profile bonsai-2-27b -o "$T" >/dev/null
    "$B" inspect "$T" --json "$T.json" >/dev/null
    python3 "$HERE/punch-produced.py" "$T.json" "$T"
    echo "template: $(stat -c %s "$T") bytes, $(du -B1 "$T" | cut -f1) on disk; free $(free_gb) GB"
    "$B" synth --profile bonsai-2-27b --format pq2_0 --seed 0 -o "$G" >/dev/null
    "$B" pack --gguf "$G" --template "$T" -o "$A" | tail -3
    rm -f "$T" "$T.json" "$G"
    cp "$A" "$C"
    echo "pair: $(stat -c %s "$A") bytes each, $("$B" inspect "$A" --json - | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["objects"]))') objects; free $(free_gb) GB"
    rounds identical
    flip_near_end
    "$B" diff "$A" "$C" | head -4 || true
    rounds one-byte
    rm -f "$C"
    "$B" mutate "$A" --kind swap-two-rows -o "$C" >/dev/null
    echo "mutated: first differing byte (cmp): $(cmp "$A" "$C" | head -1 || true)"
    "$B" diff "$A" "$C" | head -6 || true
    rounds swap-two-rows
    ;;
*) echo "mode: gguf or ninfer"; exit 2 ;;
esac
