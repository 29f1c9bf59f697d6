#!/usr/bin/env bash
# Full-scale (bonsai-2-27b) timings of the commands of issue #14, one function per measured
# command; each prints its wall time best of 3 with the load average (`uptime`) of every try.
# The machine is shared, so record the load with each number.
#
#   scripts/measure-synth-27b.sh synth|synth_template|pack_vs_cp [DIR]
#
# DIR (default /work/scratch/measure) receives one big output at a time, deleted after timing.
# REF_M27 / REF_T27 (optional) name reference outputs of main's binary; when set, each output is
# compared byte for byte (`cmp`) before it is deleted.
set -euo pipefail
B=${B:-target/release/ninfer-ternary}
DIR=${2:-/work/scratch/measure}
mkdir -p "$DIR"

best_of_3() { # best_of_3 NAME CMD...: runs CMD three times, prints each time, load and the best
    local name=$1 best= t; shift
    for i in 1 2 3; do
        local s e
        s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc)
        echo "$name try $i: ${t}s  load: $(uptime | sed 's/.*load average: //')"
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
        [ -n "${AFTER:-}" ] && eval "$AFTER"
    done
    echo "$name best of 3: ${best}s"
}

# --- perfsynth: synth, synth-template, pack vs cp -------------------------------------------

# synth of the 27B model (PQ2_0, seed 0): target <= 15 s (issue #14).
synth() {
    AFTER="${REF_M27:+cmp $DIR/m27.gguf $REF_M27 && echo identical;} rm -f $DIR/m27.gguf" \
        best_of_3 synth "$B" synth --profile bonsai-2-27b --format pq2_0 --seed 0 -o "$DIR/m27.gguf"
}

# synth-template of the 27B profile (17.5 GB): target = the disk's write speed, measured by dd of
# the same byte count with fdatasync (the template's write ends with fsync too), both through the
# page cache and direct (the bound is the faster). The outputs bypass the page cache by default
# (src/fsio/output.rs); the NINFER_WRITE=buffered row is the page-cache path for comparison.
synth_template() {
    AFTER="${REF_T27:+cmp $DIR/t27.ninfer $REF_T27 && echo identical;} rm -f $DIR/t27.ninfer" \
        best_of_3 synth-template "$B" synth-template --profile bonsai-2-27b -o "$DIR/t27.ninfer"
    AFTER="rm -f $DIR/t27.ninfer" best_of_3 "synth-template NINFER_WRITE=buffered" \
        env NINFER_WRITE=buffered "$B" synth-template --profile bonsai-2-27b -o "$DIR/t27.ninfer"
    AFTER="rm -f $DIR/dd.bin" best_of_3 "dd 16M x 1046 fdatasync" \
        dd if=/dev/zero of="$DIR/dd.bin" bs=16M count=1046 conv=fdatasync status=none
    AFTER="rm -f $DIR/dd.bin" best_of_3 "dd 16M x 1046 oflag=direct fdatasync" \
        dd if=/dev/zero of="$DIR/dd.bin" bs=16M count=1046 oflag=direct conv=fdatasync status=none
}

# pack of the 27B PQ2_0 model vs cp of its own output (target: pack <= 1.2x cp). Needs the model
# and the template (made here when absent, into DIR).
pack_vs_cp() {
    local m=${REF_M27:-$DIR/m27.gguf} t=${REF_T27:-$DIR/t27.ninfer}
    [ -e "$m" ] || "$B" synth --profile bonsai-2-27b -o "$m"
    [ -e "$t" ] || "$B" synth-template --profile bonsai-2-27b -o "$t"
    AFTER="rm -f $DIR/a27.ninfer" \
        best_of_3 pack "$B" pack --gguf "$m" --template "$t" -o "$DIR/a27.ninfer"
    "$B" pack --gguf "$m" --template "$t" -o "$DIR/a27.ninfer" >/dev/null
    AFTER="rm -f $DIR/cp.ninfer" best_of_3 "cp of pack's output" \
        sh -c "cp '$DIR/a27.ninfer' '$DIR/cp.ninfer' && sync '$DIR/cp.ninfer'"
    # pack writes around the page cache; so does this copy (the stricter bound).
    AFTER="rm -f $DIR/cp.ninfer" best_of_3 "dd copy of pack's output, oflag=direct" \
        dd if="$DIR/a27.ninfer" of="$DIR/cp.ninfer" bs=16M oflag=direct conv=fdatasync status=none
    rm -f "$DIR/a27.ninfer"
}

"${1:?usage: $0 synth|synth_template|pack_vs_cp [DIR]}"
