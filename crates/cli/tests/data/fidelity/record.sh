#!/bin/bash
# Records one fixture of `tests/replay_predicts_recorded_run.rs` (issue #18):
#   record.sh FLUSHWISE WORKDIR POLICY
# FLUSHWISE: a release build of the CLI; WORKDIR: a directory on the disk to
# measure (needs ~1.5 GiB free; a prepared 2-warehouse database is kept there
# and reused). Writes tests/data/fidelity/POLICY/: preset.toml (the disk
# calibrated right before the run, as `lab run fidelity` does), the run's
# gzipped trace and its CPU costs, and engine.json (the run's result line).
# Run it on a quiet machine: nothing else on the cores or the disk.
set -euo pipefail
FW=$1; WORK=$2; POLICY=$3
OUT=$(cd "$(dirname "$0")" && pwd)/$POLICY
mkdir -p "$WORK" "$OUT"
if [ ! -d "$WORK/tpcc-w2" ]; then
  "$FW" tpcc prepare --dir "$WORK/tpcc-w2" --warehouses 2 >&2
fi
"$FW" device calibrate --dir "$WORK/calibrate" --out "$OUT/preset.toml" \
  --file-size 512MiB --duration-per-point 400ms > /dev/null
rm -rf "$WORK/calibrate" "$WORK/run"
cp -r "$WORK/tpcc-w2" "$WORK/run"
"$FW" tpcc run --dir "$WORK/run" --policy "$POLICY" --connections 4 --buffer-pool 16MiB \
  --warmup 2s --duration 4s --trace "$WORK/trace.fwtrace" --output json \
  | grep '"kind":"result"' > "$OUT/engine.json"
rm -rf "$WORK/run"
gzip -9 -c "$WORK/trace.fwtrace" > "$OUT/trace.fwtrace.gz"
mv "$WORK/trace.fwtrace.cpu.json" "$OUT/trace.fwtrace.cpu.json"
rm -f "$WORK/trace.fwtrace"
ls -l "$OUT" >&2
