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
# Lee et al. Experiment 1 scaled by 20: 50 warehouses (~5 GB of pages), a
# 205 MiB pool (the paper's 4 GiB of 100 GB), 819 MiB of redo, 20
# connections, Samsung 850 PRO model; every registered policy.
exec ./target/release/flushwise sim compare \
  --warehouses 50 --buffer-pool 205M --redo 819M --connections 20 \
  --device samsung-850-pro --warmup 120s --duration 60s "$@"
