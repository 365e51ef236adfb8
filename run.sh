#!/usr/bin/env bash
# The main job: installs the Rust toolchain if it is missing, builds flushwise
# and runs the policy comparison in the simulator (TPC-C page references,
# the paper's ratios scaled to minutes). Extra arguments go to `sim compare`.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "run.sh: cargo not found, installing the stable Rust toolchain with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
cargo build --release -p flushwise-cli --quiet
exec ./target/release/flushwise sim compare "$@"
