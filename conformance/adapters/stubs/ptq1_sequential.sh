#!/bin/sh
# Stub: py_ninfer with the deliberate bug 'ptq1_sequential' (see ../py_ninfer/reader.py).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../py_ninfer/adapter.sh" --bug ptq1_sequential "$@"
