#!/bin/sh
# mainline adapter: llama.cpp gguf.cpp with no_alloc=true (scripts/setup-mainline.sh builds it).
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/adapter.py" "$@"
