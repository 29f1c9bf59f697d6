#!/bin/sh
# hf_gguf adapter: npm @huggingface/gguf (exact pin in readers/npm/package-lock.json), installed
# by scripts/setup-readers.sh into readers/npm/node_modules.
here=$(cd "$(dirname "$0")" && pwd)
exec node "$here/adapter.mjs" "$@"
