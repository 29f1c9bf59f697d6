#!/bin/sh
# Stub: py_ninfer with the deliberate bug 'no_perm' (see ../py_ninfer/reader.py).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../py_ninfer/adapter.sh" --bug no_perm "$@"
