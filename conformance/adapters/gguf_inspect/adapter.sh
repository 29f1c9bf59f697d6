#!/bin/sh
# gguf_inspect adapter: PyPI gguf-inspect==0.1.0, installed by scripts/setup-readers.sh into
# readers/pypi/site (pip --target), run with the repository's .venv interpreter.
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$here/../../../readers/pypi/site" exec "$here/../../../.venv/bin/python" "$here/adapter.py" "$@"
