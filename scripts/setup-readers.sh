#!/usr/bin/env bash
# Installs the real third-party GGUF readers the conformance matrix runs, each from its registry
# at an exact version (nothing vendored). Idempotent; every install lands in an ignored folder.
#   npm    @huggingface/gguf 0.4.6      -> readers/npm/node_modules      (package-lock.json)
#   PyPI   gguf-inspect 0.1.0           -> readers/pypi/site              (pip --target, pinned)
#   crates candle-core =0.11.1          -> readers/candle/target/release/candle-adapter (Cargo.lock)
# Options: --no-candle   skip the candle build (~8 minutes cold on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
CANDLE=1
[ "${1:-}" = "--no-candle" ] && CANDLE=0
t0=$(date +%s)

if ! node -e 'process.exit(require("./readers/npm/node_modules/@huggingface/gguf/package.json").version === "0.4.6" ? 0 : 1)' 2>/dev/null; then
  (cd readers/npm && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
echo "npm: @huggingface/gguf $(node -p 'require("./readers/npm/node_modules/@huggingface/gguf/package.json").version')"

[ -x .venv/bin/python ] || bash scripts/setup-python.sh >/dev/null
if ! PYTHONPATH=readers/pypi/site .venv/bin/python -c 'import gguf_inspect as g; assert g.__version__ == "0.1.0"' 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
    --target readers/pypi/site "gguf-inspect==0.1.0"
fi
echo "pypi: gguf-inspect $(PYTHONPATH=readers/pypi/site .venv/bin/python -c 'import gguf_inspect as g; print(g.__version__)')"

if [ $CANDLE = 1 ]; then
  (cd readers/candle && cargo build --release --locked --quiet)
  echo "crates.io: candle-core $(grep -A1 '^name = "candle-core"' readers/candle/Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p')"
fi
echo "readers ready in $(( $(date +%s) - t0 ))s"
