"""TPC-C on the real engine (O_DIRECT data file, redo log, doublewrite), the
same Rust code path as ``flushwise tpcc prepare`` and ``flushwise tpcc run``.

A run needs a prepared directory (:func:`tpcc_prepare`, once); each run
opens it with the run's settings, drives the TPC-C mix on real threads for
wall-clock time and closes it cleanly. ``io="buffered"`` works on any
filesystem (tmpfs included); ``"direct"`` (the default, what a measurement
needs) needs one that supports O_DIRECT.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Union

from . import _native
from ._common import frame, options_json, split_json_lines

PathLike = Union[str, "os.PathLike[str]"]


def tpcc_prepare(
    dir: PathLike,
    warehouses: int = 1,
    *,
    redo_dir: Optional[PathLike] = None,
    io: str = "direct",
    threads: Optional[int] = None,
    seed: int = 1,
    page_size: Union[int, str] = 16384,
    redo: Union[int, str] = "256MiB",
    buffer_pool: Union[int, str] = "256MiB",
    force: bool = False,
) -> str:
    """Creates a database in ``dir`` and loads ``warehouses`` TPC-C
    warehouses (``flushwise tpcc prepare``); returns its one-line summary.

    A directory that already holds a database is refused unless ``force``
    (which wipes it). Raises ``ValueError`` naming the problem.
    """
    return _native.tpcc_prepare(
        options_json(
            {
                "dir": os.fspath(dir),
                "redo_dir": os.fspath(redo_dir) if redo_dir is not None else None,
                "io": io,
                "warehouses": int(warehouses),
                "threads": threads,
                "seed": int(seed),
                "page_size": str(page_size),
                "redo": str(redo),
                "buffer_pool": str(buffer_pool),
                "force": bool(force),
            }
        )
    )


def tpcc_run(
    dir: PathLike,
    policy: str = _native.DEFAULT_POLICY,
    *,
    connections: int = 16,
    buffer_pool: Union[int, str] = "32MiB",
    redo: Optional[Union[int, str]] = None,
    device: Union[str, Sequence[str]] = "native",
    doublewrite: bool = True,
    flush_log_at_commit: int = 1,
    warmup: Union[str, int, float] = "30s",
    duration: Union[str, int, float] = "60s",
    report_interval: Union[str, int, float] = "10s",
    seed: int = 1,
    keying_think: bool = False,
    max_recovery_time: Optional[Union[str, int, float]] = None,
    trace: Optional[PathLike] = None,
    decisions: Optional[PathLike] = None,
    redo_dir: Optional[PathLike] = None,
    io: str = "direct",
    with_intervals: bool = False,
) -> Any:
    """Runs TPC-C on the prepared database in ``dir`` under ``policy``
    (``flushwise tpcc run``); returns the result dict, the same keys as
    ``tpcc run --output json``'s result line (``shell`` is ``"engine"``).

    ``device`` is ``"native"`` or ``"emulated PRESET"`` (or a list of those
    words); durations are text with a unit or seconds; ``redo`` resizes the
    log before the run. ``trace`` records the run's page references,
    ``decisions`` the cleaner's iterations (JSON lines). With
    ``with_intervals=True`` returns ``(result, intervals DataFrame)``. The
    GIL is released while the engine runs. Raises ``ValueError`` naming the
    problem (a bad flag, no prepared database, a pool larger than memory).
    """

    def text(value: Any) -> Optional[str]:
        """An optional option as text (None stays None: the default applies)."""
        return None if value is None else str(value)

    words = device.split() if isinstance(device, str) else [str(w) for w in device]
    out = _native.tpcc_run(
        options_json(
            {
                "dir": os.fspath(dir),
                "redo_dir": os.fspath(redo_dir) if redo_dir is not None else None,
                "io": io,
                "policy": str(policy),
                "connections": int(connections),
                "buffer_pool": str(buffer_pool),
                "redo": text(redo),
                "device": words,
                "doublewrite": bool(doublewrite),
                "flush_log_at_commit": int(flush_log_at_commit),
                "warmup": str(warmup),
                "duration": str(duration),
                "report_interval": str(report_interval),
                "seed": int(seed),
                "keying_think": bool(keying_think),
                "max_recovery_time": text(max_recovery_time),
                "trace": os.fspath(trace) if trace is not None else None,
                "decisions": os.fspath(decisions) if decisions is not None else None,
            }
        )
    )
    result, rows = split_json_lines(out)[0]
    if with_intervals:
        return result, frame(rows)
    return result
