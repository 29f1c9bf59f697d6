#!/bin/sh
# Stub: rejects everything (no class).
cat >/dev/null
echo '{"result":"reject","class":null,"message":"stub rejects everything"}'
exit 1
