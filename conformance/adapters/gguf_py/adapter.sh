#!/bin/sh
# gguf_py adapter: PyPI gguf==0.19.0 in the repository's .venv (scripts/setup-python.sh).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../.venv/bin/python" "$here/adapter.py" "$@"
