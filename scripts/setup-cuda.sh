#!/usr/bin/env bash
# Installs NVRTC (the CUDA runtime compiler, a shared library; no GPU or driver needed) from
# PyPI into .venv-cuda/ for the kernel compile tier. Idempotent: a second run only re-checks.
# Prints the library folder; put it on LD_LIBRARY_PATH (cudarc opens libnvrtc.so.13 by name,
# and libnvrtc needs libnvrtc-builtins from the same folder). With --include it prints the CUDA
# header folder instead (cuda_fp16.h, cuda_bf16.h, ... from the nvidia-cuda-runtime wheel of the
# same version; NVRTC itself ships none): set NINFER_CUDA_INCLUDE to it.
set -euo pipefail
cd "$(dirname "$0")/.."
NVRTC_VERSION=13.5.37   # cudarc feature cuda-13000: the NVRTC major must be 13
V=.venv-cuda
if [ ! -x "$V/bin/python" ]; then
  python3 -m venv "$V"
fi
for pkg in nvidia-cuda-nvrtc nvidia-cuda-runtime; do
  if ! "$V/bin/python" -m pip show "$pkg" 2>/dev/null | grep -qx "Version: $NVRTC_VERSION"; then
    "$V/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$pkg==$NVRTC_VERSION"
  fi
done
lib=$(ls -d "$PWD/$V"/lib/python3*/site-packages/nvidia/cu13/lib 2>/dev/null | head -1)
if [ -z "$lib" ] || [ ! -e "$lib/libnvrtc.so.13" ]; then
  echo "setup-cuda: libnvrtc.so.13 not found under $V" >&2
  exit 2
fi
# cudarc also tries the unversioned name; a link keeps both spellings working.
[ -e "$lib/libnvrtc.so" ] || ln -s libnvrtc.so.13 "$lib/libnvrtc.so"
inc=$(ls -d "$PWD/$V"/lib/python3*/site-packages/nvidia/cu13/include 2>/dev/null | head -1)
if [ -z "$inc" ] || [ ! -e "$inc/cuda_fp16.h" ]; then
  echo "setup-cuda: cuda_fp16.h not found under $V" >&2
  exit 2
fi
if [ "${1:-}" = --include ]; then echo "$inc"; else echo "$lib"; fi
