#!/usr/bin/env bash
# rustfmt over the modules lib.rs declares through `internal_mod!`: `cargo fmt` does not expand
# macros, so it never reaches them (or their submodules). The list is read from lib.rs, so a
# module added there is covered without editing this script.
# Usage: scripts/fmt-internal-modules.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
mods=$(grep -o 'internal_mod!(\(allow_unused \)\?[a-z_]*)' src/lib.rs | sed 's/.*[( ]\([a-z_]*\))$/\1/')
[ -n "$mods" ] || { echo "no internal_mod! declarations found in src/lib.rs" >&2; exit 2; }
files=()
for m in $mods; do
  if [ -f "src/$m/mod.rs" ]; then files+=("src/$m/mod.rs"); else files+=("src/$m.rs"); fi
done
rustfmt --edition 2021 "$@" "${files[@]}"
