#!/usr/bin/env bash
# The main job: installs the Rust toolchain if it is missing, builds flushwise
# and runs `flushwise compare`: TPC-C on the real engine (O_DIRECT files,
# redo log, doublewrite) under mysql56, percona56 and self-tuning, side by
# side, in Lee et al.'s regime (--preset paper-regime: 30 warehouses, a
# 352 MiB pool holding seconds of misses, a 2 GiB redo log), each policy
# warmed up until its tuned parameters hold still, then measured 60 s. The
# first run prepares the database (~2.7 GB) in ./flushwise-data and later
# runs reuse it; it needs about 8 GB free and takes about 30 minutes. Extra arguments go to
# `flushwise compare` (`--preset paper-regime-quick`, `--preset small-pool`,
# `--preset in-memory`; `--help`
# lists them). The simulator's comparison is `flushwise sim compare`.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "run.sh: cargo not found, installing the stable Rust toolchain with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
cargo build --release -p flushwise-cli --quiet
exec ./target/release/flushwise compare "$@"
