#!/bin/sh
# Stub 'id42_g64': the reference adapter forced to read ggml type 42 as mainline Q2_0
# (64-element blocks, 18 B) in every file, i.e. a reader that is not legacy-aware. It adds
# "id42": "g64" to the request's params (PROTOCOL.md §4.2) and runs `reader-adapter`.
here=$(cd "$(dirname "$0")" && pwd)
bin=${NINFER_BIN:-$here/../../../target/release/ninfer-ternary}
req=$(python3 -c 'import json,sys; r=json.load(sys.stdin); r.setdefault("params",{})["id42"]="g64"; print(json.dumps(r))') || exit 3
printf '%s' "$req" | exec "$bin" reader-adapter "$@"
