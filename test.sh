#!/usr/bin/env bash
# The README's test command: every Rust test, then the Python package built
# into a fresh venv (from the same target directory, so it reuses what
# `cargo test --release` compiled) and its pytest suite, which compares it
# with the `flushwise` binary and runs a small sweep on a local Ray.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found; install Rust (https://rustup.rs) or run .ci/run, which installs it" >&2
  exit 1
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import venv, sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  echo "test.sh: $PY with the venv module, 3.9 or later, is needed for the Python package's tests (Debian: apt-get install python3-venv)" >&2
  exit 1
fi

echo "== cargo test --workspace --release" >&2
cargo test --workspace --release

echo "== python: pip install ./python[ray] pytest duckdb && pytest python/tests" >&2
py_started=$(date +%s)
VENV="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$VENV")"' EXIT
"$PY" -m venv "$VENV"
# duckdb: the TPC-H answer check compares our 22 queries with DuckDB's.
"$VENV/bin/pip" install -q "./python[ray]" pytest duckdb
py_installed=$(date +%s)
FLUSHWISE_BIN="$PWD/target/release/flushwise" FLUSHWISE_REQUIRE_DUCKDB=1 "$VENV/bin/python" -m pytest python/tests
py_done=$(date +%s)
echo "test.sh: python package installed in $((py_installed - py_started)) s, tested in $((py_done - py_installed)) s" >&2
