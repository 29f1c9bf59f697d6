#!/bin/sh
# Stub: py_ninfer with the deliberate bug 'drop_high' (see ../py_ninfer/reader.py).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../py_ninfer/adapter.sh" --bug drop_high "$@"
