#!/bin/sh
# Stub 'pq2_planar': py_ninfer reading PQ2_0 codes in a planar layout (byte j of a 32-element
# group holds elements j, j+8, j+16, j+24); see pq2_planar.py.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../.venv/bin/python" "$here/pq2_planar.py" "$@"
