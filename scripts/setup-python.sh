#!/usr/bin/env bash
# Creates .venv with the independent oracle (PyPI gguf==0.19.0) and numpy. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c 'import gguf, numpy, importlib.metadata as m; assert m.version("gguf") == "0.19.0"' 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "gguf==0.19.0" "numpy>=1.26,<3"
fi
.venv/bin/python -c 'import gguf, numpy, importlib.metadata as m; print("python oracle ready: gguf", m.version("gguf"), "numpy", numpy.__version__)'
