#!/usr/bin/env bash
# Spec-rule coverage per fuzz target: replays fuzz/corpus/<target>/ (what campaigns grew) and
# the committed seeds through the target's parsers and prints, per target, the rules of
# spec/errors.json in its domain that inputs reach (with counts) and those none reaches, so
# seeds and mutators can be aimed at the rest (testkit/src/coverage.rs).
#   fuzz/coverage.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test --quiet --test fuzz fuzz_coverage::report -- --ignored --nocapture) 2>/dev/null | grep -v '^test \|^running\|^$'
