#!/usr/bin/env bash
# The README's test command: every test of the repository.
#   1. `cargo test`: the library (default features, `internals` off: no dev-dependency turns it
#      on, tests/it/internals_off.rs), its unit tests (plumbing tests in src/tests/), the `it`
#      integration binary, the conformance corpus driver and the doc tests.
#   2. The testkit crate's tests (testkit/tests/: fuzz replays, mutators, seed coverage, target
#      table, planted-bug wiring), which need the library with `internals`: built in their own
#      target folder (target/testkit), so neither build invalidates the other.
# Arguments go to both `cargo test` runs (e.g. `scripts/test.sh --quiet`).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== cargo test (the library without internals)"
cargo test "$@"
echo "== testkit tests (the library with internals, target/testkit)"
(cd testkit && CARGO_TARGET_DIR=../target/testkit cargo test "$@")
