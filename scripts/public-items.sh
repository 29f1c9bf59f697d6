#!/usr/bin/env bash
# The public item count of the library's default build (no `internals` feature), issue #36.
#
# Stable rustdoc has no JSON output, so this counts the item pages `cargo doc --no-deps --lib`
# writes under target/doc/ninfer_ternary/: one page per public item (struct., enum., fn.,
# trait., type., constant., macro., static., union.), redirect stubs left out. The folder is
# removed first: rustdoc never deletes pages of items that stopped being public. Members
# (methods, fields, variants, associated constants) have no page of their own; they are
# counted separately from the anchors on the item pages.
#
#   scripts/public-items.sh [--write FILE]    (FILE gets a dated line with both numbers)
set -euo pipefail
cd "$(dirname "$0")/.."
D=target/doc/ninfer_ternary
rm -rf "$D"
cargo doc --no-deps --lib --quiet
pages=$(find "$D" -type f \( -name 'struct.*.html' -o -name 'enum.*.html' -o -name 'fn.*.html' \
    -o -name 'trait.*.html' -o -name 'type.*.html' -o -name 'constant.*.html' \
    -o -name 'macro.*.html' -o -name 'static.*.html' -o -name 'union.*.html' \) \
    -exec grep -L 'http-equiv="refresh"' {} + | sort)
items=$(printf '%s\n' "$pages" | grep -c . || true)
modules=$(find "$D" -type f -name index.html -exec grep -L 'http-equiv="refresh"' {} + | grep -c . || true)
# Members: each documented method/field/variant/associated item has an anchor id on its page.
members=$(printf '%s\n' "$pages" | xargs grep -oh 'id="\(method\|structfield\|variant\|associatedconstant\|tymethod\|associatedtype\)\.[A-Za-z0-9_]*"' | wc -l)
echo "public items (pages): $items"
echo "public modules: $modules"
echo "members (methods, fields, variants, associated items, incl. trait impls): $members"
printf '%s\n' "$pages" | sed "s|^$D/||; s|/[^/]*\$||; s|^[a-z]*\.[^/]*\.html\$|(crate root)|" | sort | uniq -c | sort -rn
if [ "${1:-}" = "--write" ] && [ -n "${2:-}" ]; then
    echo "$(date -u +%F) $(git rev-parse --short HEAD): $items public items, $modules modules, $members members" >> "$2"
fi
