#!/bin/sh
# Stub: py_ninfer with the deliberate bug 'scale_at_0' (see ../py_ninfer/reader.py).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../py_ninfer/adapter.sh" --bug scale_at_0 "$@"
