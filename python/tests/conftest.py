"""Shared fixtures: a small, fast simulator configuration and the
``flushwise`` binary built from the same tree, when there is one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]

#: A run of a fraction of a second: 2 warehouses, a pool of a fifth of the data.
SMALL: Dict[str, Any] = {
    "warehouses": 2,
    "buffer_pool": "4MiB",
    "redo": "16MiB",
    "warmup": "2s",
    "duration": "4s",
    "report_interval": "2s",
    "connections": 8,
}

#: Columns that depend on the wall clock, not on the run.
WALL = {"wall_seconds", "requests_per_second"}


def _binary() -> Optional[Path]:
    explicit = os.environ.get("FLUSHWISE_BIN")
    if explicit:
        return Path(explicit)
    candidates = []
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "flushwise")
    candidates.append(REPO / "target" / "release" / "flushwise")
    found = next((c for c in candidates if c.is_file()), None)
    if found is None and shutil.which("flushwise"):
        return Path(shutil.which("flushwise"))  # type: ignore[arg-type]
    return found


@pytest.fixture(scope="session")
def flushwise_bin() -> Optional[Path]:
    """The `flushwise` binary (FLUSHWISE_BIN, or target/release/flushwise), or None."""
    return _binary()


def cli_json(binary: Path, args: List[str]) -> List[Dict[str, Any]]:
    """Runs `flushwise ARGS --output json`; its JSON lines as dicts."""
    out = subprocess.run(
        [str(binary), *args, "--output", "json"], check=True, capture_output=True, text=True, timeout=300
    )
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def cli_flags(options: Dict[str, Any]) -> List[str]:
    """`sim run` flags for an options dict."""
    flags: List[str] = []
    for key, value in options.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    return flags


def without_wall(record: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in record.items() if k not in WALL}
