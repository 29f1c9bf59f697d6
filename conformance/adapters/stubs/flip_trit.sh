#!/bin/sh
# Stub: py_ninfer with the deliberate bug 'flip_trit' (see ../py_ninfer/reader.py).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../py_ninfer/adapter.sh" --bug flip_trit "$@"
