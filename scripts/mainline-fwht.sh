#!/usr/bin/env bash
# Judges mainline llama.cpp's CUDA fast Walsh-Hadamard transform, UNCHANGED, with
# `check-kernel --class hadamard_rotate`: ggml/src/ggml-cuda/fwht.cu (+ its fwht.cuh) of the
# llama.cpp vendored in the PyPI sdist llama-cpp-python (pinned below, ggml 0.25.3) is extracted
# from the sdist tarball into target/mainline-fwht/ (ignored; never committed) next to our
# shadow headers (conformance/adapters/mainline_fwht/shadow/: stand-ins for the few names
# fwht.cu takes from ggml-cuda's common.cuh and convert.cuh). Host tier: NO wrapper kernel --
# mainline's template kernel is the entry, instantiated by name (--entry 'fwht_cuda<B, float>'),
# launched and bound by the sidecar conformance/adapters/mainline_fwht/fwht_cuda.abi.json
# (mainline's grid/block, n_rows, scale = 1 / sqrt(block)), its signs applied by the sidecar's
# declared pre-step ("pre": "signs": x arrives as s * x). One check-kernel run per block size
# mainline's dispatcher launches (fwht.cu: n = 64, 128, 256, 512).
# Compile/device tiers (TIER=compile|device): NVRTC looks an entry up by its plain name, so
# they still go through our wrapper (conformance/adapters/mainline_fwht/wrapper.cu + fwht.abi.json)
# until the NVRTC path resolves template names.
# Env: TIER (host | compile | device; default host), NINFER (binary; default target/release),
#      MAINLINE_DIR (default target/mainline), EXT=1 to also run the instantiations mainline never
#      launches (B = 32, 1024).
# Exit: 0 every run passed; 1 a run failed; 2 cannot run here (tier unavailable, or the CLI
#       cannot select cases by B yet) -- never a pass.
set -euo pipefail
cd "$(dirname "$0")/.."
PIN=0.3.36
GGML_VERSION=0.25.3
FWHT_SHA256=18089e48c69b232bd1bf19a50ba368650083350f0c8f79cb7d484fe9f6d58fe0   # fwht.cu as researched
DIR=${MAINLINE_DIR:-target/mainline}
OUT=target/mainline-fwht
AD=conformance/adapters/mainline_fwht
TIER=${TIER:-host}
NINFER=${NINFER:-./target/release/ninfer-ternary}
BLOCKS=(64 128 256 512)
V=llama_cpp_python-$PIN/vendor/llama.cpp/ggml

TAR=$DIR/llama_cpp_python-$PIN.tar.gz
if [ ! -f "$TAR" ]; then
  scripts/setup-mainline.sh   # downloads the pinned sdist into $DIR (and builds the GGUF reader)
fi
rm -rf "$OUT"
mkdir -p "$OUT/sdist"
tar -xzf "$TAR" -C "$OUT/sdist" "$V/CMakeLists.txt" "$V/src/ggml-cuda/fwht.cu" "$V/src/ggml-cuda/fwht.cuh"
got=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$OUT/sdist/$V/CMakeLists.txt" | paste -sd.)
if [ "$got" != "$GGML_VERSION" ]; then
  echo "mainline-fwht: expected ggml $GGML_VERSION in llama-cpp-python $PIN, found '$got'" >&2; exit 1
fi
cp "$OUT/sdist/$V/src/ggml-cuda/fwht.cu" "$OUT/sdist/$V/src/ggml-cuda/fwht.cuh" "$OUT/"
cp "$AD"/shadow/*.cuh "$OUT/"
cp "$AD/wrapper.cu" "$OUT/"   # for the compile/device tiers and .ci/run's NVRTC stage
sha=$(sha256sum "$OUT/fwht.cu" | cut -d' ' -f1)
echo "mainline fwht: llama-cpp-python $PIN (ggml $got), ggml/src/ggml-cuda/fwht.cu sha256 $sha"
echo "               fwht.cuh sha256 $(sha256sum "$OUT/fwht.cuh" | cut -d' ' -f1)"
if [ "$sha" != "$FWHT_SHA256" ]; then
  echo "mainline-fwht: fwht.cu differs from the researched file ($FWHT_SHA256): re-check wrapper and shadow headers" >&2; exit 1
fi

cargo build --release --quiet
if [ "$TIER" = host ]; then
  # Sidecar only: mainline's own kernel, instantiated at B by name, over the generated case of
  # each B plus 100 random cases (those drawn at that B run).
  run_entry() { "$NINFER" check-kernel --source "$OUT/fwht.cu" --abi "$AD/fwht_cuda.abi.json" --class hadamard_rotate --tier "$TIER" --entry "fwht_cuda<$1, float>" --block "$2" "${@:3}"; }
else
  run_entry() {
    local e=mainline_fwht a=fwht.abi.json
    if [ "$1" = 32 ] || [ "$1" = 1024 ]; then e=mainline_fwht_ext a=fwht_ext.abi.json; fi
    "$NINFER" check-kernel --source "$OUT/wrapper.cu" --abi "$AD/$a" --class hadamard_rotate --tier "$TIER" --entry "$e" --block "$2" "${@:3}"
  }
fi

fail=0
skip=0
run_b() {  # instantiation B, case B [more check-kernel args]
  local rc=0
  echo "== mainline fwht, B = $2 (fwht_cuda<$1, float>), tier $TIER ${*:3}"
  run_entry "$1" "$2" "${@:3}" || rc=$?
  case $rc in 0) ;; 2) skip=1 ;; *) fail=1 ;; esac
}
for b in "${BLOCKS[@]}"; do
  run_b "$b" "$b"
  run_b "$b" "$b" --random 100 --seed 1
done
if [ "${EXT:-0}" = 1 ]; then
  for b in 32 1024; do run_b "$b" "$b"; done   # instantiations mainline never launches
fi
# Negative control: the B = 512 instantiation judged on B = 256 cases (rows of the wrong length)
# must FAIL (exit 1) -- the judge can reject mainline's kernel bound this way.
rc=0; run_entry 512 256 >/dev/null || rc=$?
if [ "$TIER" = host ] && [ $rc != 1 ]; then
  echo "mainline fwht: the negative control (fwht_cuda<512> on B = 256 cases) did not fail (exit $rc)"; fail=1
fi
if [ $fail = 1 ]; then echo "mainline fwht: FAILED"; exit 1; fi
if [ $skip = 1 ]; then echo "mainline fwht: SKIPPED (tier $TIER unavailable) -- NOT a pass"; exit 2; fi
echo "mainline fwht: PASSED at B = ${BLOCKS[*]} (tier $TIER; the negative control fails as it must)"
