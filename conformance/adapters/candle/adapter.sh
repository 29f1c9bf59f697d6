#!/bin/sh
# candle adapter: crates.io candle-core =0.11.1 (quantized::gguf_file), built by
# scripts/setup-readers.sh from readers/candle (its own workspace and Cargo.lock).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../../readers/candle/target/release/candle-adapter" "$@"
