#!/usr/bin/env bash
# Builds the mainline GGUF reader used by conformance/adapters/mainline (PROTOCOL.md §6.1):
# llama.cpp's ggml/src/gguf.cpp and ggml-base (type traits, to_float decoders) from the
# llama.cpp sources vendored in the PyPI sdist of llama-cpp-python, pinned below, compiled
# directly with cc/c++ (no cmake), plus the driver conformance/adapters/mainline/driver.c.
# Sources are downloaded at setup time into target/mainline/ (ignored; never committed).
# Idempotent: a finished build with the same pin and driver is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
PIN=0.3.36            # llama-cpp-python; vendors llama.cpp with ggml 0.25.3
GGML_VERSION=0.25.3   # checked against vendor/llama.cpp/ggml/CMakeLists.txt below
DIR=${MAINLINE_DIR:-target/mainline}
DRIVER=conformance/adapters/mainline/driver.c
SRC=$DIR/llama_cpp_python-$PIN/vendor/llama.cpp/ggml
stamp="$PIN $(sha256sum "$DRIVER" | cut -c1-16)"
if [ -x "$DIR/bin/gguf-mainline" ] && [ "$(cat "$DIR/bin/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "mainline reader ready: $DIR/bin/gguf-mainline (llama-cpp-python $PIN, ggml $GGML_VERSION)"; exit 0
fi
t0=$(date +%s)
mkdir -p "$DIR"
if [ ! -d "$SRC" ]; then
  PY=${PYTHON:-python3}
  # --no-binary for this one package only: the sdist is what we want; it is not built.
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-python "llama-cpp-python==$PIN" -d "$DIR"
  # ggml is compiled; the loader sources and test-gguf.cpp are extracted for reading only
  # (spec/gguf.json rule_layers cites lines in them).
  V=llama_cpp_python-$PIN/vendor/llama.cpp
  tar -xzf "$DIR/llama_cpp_python-$PIN.tar.gz" -C "$DIR" "$V/ggml" "$V/src/llama-model-loader.h" \
    "$V/src/llama-model-loader.cpp" "$V/src/llama-model.cpp" "$V/tests/test-gguf.cpp"
fi
got=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$SRC/CMakeLists.txt" | paste -sd.)
if [ "$got" != "$GGML_VERSION" ]; then
  echo "setup-mainline: expected ggml $GGML_VERSION in llama-cpp-python $PIN, found '$got'" >&2; exit 1
fi
B=$DIR/build; mkdir -p "$B" "$DIR/bin"
printf '#pragma once\n#define GGML_VERSION "%s"\n#define GGML_COMMIT "llama-cpp-python-%s"\n' "$GGML_VERSION" "$PIN" > "$B/ggml-version.h"
DEFS=(-D_GNU_SOURCE -D_XOPEN_SOURCE=600 -DGGML_SCHED_MAX_COPIES=4 -DNDEBUG)
INC=(-I"$SRC/include" -I"$SRC/src" -I"$B")
JOBS=${JOBS:-$(nproc)}
objs=()
pids=()
for f in ggml.c ggml-alloc.c ggml-quants.c ggml.cpp ggml-backend.cpp ggml-backend-meta.cpp \
         ggml-opt.cpp ggml-threading.cpp gguf.cpp; do
  o=$B/${f//./_}.o; objs+=("$o")
  case $f in
    *.c) cmd=(cc -std=gnu11 -O1 -w "${DEFS[@]}" "${INC[@]}" -c "$SRC/src/$f" -o "$o");;
    *)   cmd=(c++ -std=gnu++17 -O1 -w "${DEFS[@]}" "${INC[@]}" -c "$SRC/src/$f" -o "$o");;
  esac
  "${cmd[@]}" & pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
cc -std=gnu11 -O1 -Wall -Wextra -Werror "${DEFS[@]}" "${INC[@]}" -c "$DRIVER" -o "$B/driver.o"
c++ -o "$DIR/bin/gguf-mainline" "$B/driver.o" "${objs[@]}" -lpthread -lm
echo "$stamp" > "$DIR/bin/stamp"
echo "mainline reader built in $(( $(date +%s) - t0 ))s: $DIR/bin/gguf-mainline (llama-cpp-python $PIN, ggml $GGML_VERSION)"
