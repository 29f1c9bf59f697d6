#!/bin/sh
# mainline_alloc adapter: llama.cpp gguf.cpp with no_alloc=false (it also reads the tensor data).
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/../mainline/adapter.py" --alloc "$@"
