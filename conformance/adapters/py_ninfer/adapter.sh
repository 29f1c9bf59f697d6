#!/bin/sh
# py_ninfer adapter: runs reader.py in the repository's .venv (scripts/setup-python.sh).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../.venv/bin/python" "$here/reader.py" "$@"
