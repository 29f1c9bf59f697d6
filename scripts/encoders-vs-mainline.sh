#!/usr/bin/env bash
# The suite's encoders against the format owner's reference quantizers where the owner is
# mainline ggml (Q8_0, Q1_0, Q2_0-g64, TQ1_0, TQ2_0): builds conformance/adapters/mainline/
# quantize_ref.c against the pinned ggml (scripts/setup-mainline.sh) and runs the test
# `encoders::bytes_equal_the_mainline_reference_quantizers` with it (spec/codecs.md
# #quantizer-edge-inputs: identical bytes on finite blocks with amax 0 or >= 2^-126, identical
# decode when amax is an f32 subnormal). The test fails when the harness is missing here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-mainline.sh >/dev/null
DIR=${MAINLINE_DIR:-target/mainline}
SRC=$DIR/llama_cpp_python-0.3.36/vendor/llama.cpp/ggml
B=$DIR/build
mkdir -p "$DIR/probe"
cc -std=gnu11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -DNDEBUG -I"$SRC/include" -I"$SRC/src" -I"$B" \
  -c conformance/adapters/mainline/quantize_ref.c -o "$DIR/probe/quantize_ref.o"
objs=()
for o in "$B"/*.o; do [ "$(basename "$o")" = driver.o ] || objs+=("$o"); done
c++ -o "$DIR/probe/quantize-ref" "$DIR/probe/quantize_ref.o" "${objs[@]}" -lpthread -lm
NINFER_QUANTIZE_REF=$PWD/$DIR/probe/quantize-ref cargo test --quiet --test it -- --exact \
  encoders::bytes_equal_the_mainline_reference_quantizers --nocapture
