"""Sweeps: a grid of simulator runs (policy x parameters x pool x device x
workload x ...) run as Ray tasks, merged into one table identical to the
one ``flushwise sim sweep --grid FILE`` makes in Rust.

A grid is a mapping of ``flushwise.sim.run`` options; a list is an axis,
the first axis varying slowest; a ``policy`` item may be a mapping
``{"name": "mysql56", "io_capacity": [200, 400]}`` whose parameter lists
expand too. The grid is expanded, checked and every run's row computed by
the Rust lab (``flushwise_lab::sweep``), so both front ends share one
definition of the table: ``run`` (the index in the grid), the result's
columns as ``--output csv`` names them, and ``nopm_cov``. Only the
wall-clock columns (``WALL_CLOCK_COLUMNS``) differ between two runs.

Ray is optional (``pip install ./python[ray]``) and imported only when a
sweep runs on it; ``local=True`` (``--local``) runs on threads instead.

Command line: ``flushwise-sweep --grid grid.yaml --output csv`` (see
``flushwise-sweep --help``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

#: Columns that depend on the machine and its load, not on the run.
WALL_CLOCK_COLUMNS: List[str] = list(_native.WALL_CLOCK_COLUMNS)


def load_grid(path: PathLike) -> Dict[str, Any]:
    """A grid from a YAML or JSON file (JSON is YAML, so either parses)."""
    text = open(path, encoding="utf-8").read()
    if str(path).endswith(".json"):
        grid = json.loads(text)
    else:
        import yaml

        grid = yaml.safe_load(text)
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: a grid is a mapping of options (buffer_pool: [32MiB, 64MiB], ...)")
    return grid


def expand(grid: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The grid's runs in order, each a dict of options; every run is
    checked first (``ValueError`` naming the bad key or value)."""
    return json.loads(_native.sweep_expand(json.dumps(grid)))


def _ray_missing() -> ImportError:
    """The error for a sweep on Ray without Ray installed, saying how to get it."""
    return ImportError(
        "flushwise sweeps on Ray need the ray package: pip install './python[ray]' "
        "(or pip install ray), or run locally with local=True / --local"
    )


def _log(message: str, quiet: bool) -> None:
    """A progress line on stderr (stdout may carry the table)."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _rows_local(runs: Sequence[Dict[str, Any]], jobs: int, quiet: bool) -> List[Any]:
    """Every run's row on ``jobs`` threads (the GIL is released in Rust), in grid order."""
    from concurrent.futures import ThreadPoolExecutor

    started = time.monotonic()
    rows: List[Any] = [None] * len(runs)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(_native.sweep_row, i, json.dumps(r)): i for i, r in enumerate(runs)}
        from concurrent.futures import as_completed

        for done, future in enumerate(as_completed(futures), 1):
            rows[futures[future]] = json.loads(future.result())
            _log(f"sweep: {done}/{len(runs)} runs, {time.monotonic() - started:.0f} s", quiet)
    return rows


def _rows_ray(
    runs: Sequence[Dict[str, Any]], address: Optional[str], num_cpus: Optional[int], quiet: bool
) -> List[Any]:
    """Every run's row as one Ray task each, in grid order; Ray started here
    (locally or at ``address``) unless already initialised, and shut down after."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise _ray_missing() from e

    started_here = False
    if not ray.is_initialized():
        kwargs: Dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=num_cpus, **kwargs)
        started_here = True
    try:

        @ray.remote(num_cpus=1)
        def run_row(index: int, options: str) -> str:
            """One run's row, computed by the Rust lab in the worker."""
            from flushwise import _native as native

            return native.sweep_row(index, options)

        started = time.monotonic()
        pending = {run_row.remote(i, json.dumps(r)): i for i, r in enumerate(runs)}
        rows: List[Any] = [None] * len(runs)
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    rows[i] = json.loads(ray.get(ref))
                except ray.exceptions.RayTaskError as e:
                    cause = e.as_instanceof_cause()
                    raise ValueError(str(cause).strip().splitlines()[-1]) from e
                done += 1
                _log(f"sweep: {done}/{len(runs)} runs on Ray, {time.monotonic() - started:.0f} s", quiet)
        return rows
    finally:
        if started_here:
            ray.shutdown()


def run_csv(
    grid: Mapping[str, Any],
    *,
    local: bool = False,
    address: Optional[str] = None,
    num_cpus: Optional[int] = None,
    jobs: Optional[int] = None,
    quiet: bool = False,
) -> str:
    """Runs every run of ``grid`` and returns the merged table as CSV text,
    the same text ``flushwise sim sweep`` writes for the same grid (but for
    the wall-clock columns).

    On Ray by default: a local Ray (``ray.init(num_cpus=num_cpus)``) unless
    Ray is already initialised or ``address`` names a cluster (whose nodes
    need this package installed). ``local=True`` runs on ``jobs`` threads
    in this process instead. Progress goes to stderr unless ``quiet``.
    """
    runs = expand(grid)
    _log(f"flushwise-sweep: {len(runs)} runs, commit {_native.COMMIT}", quiet)
    if local:
        rows = _rows_local(runs, jobs or (os.cpu_count() or 1), quiet)
    else:
        rows = _rows_ray(runs, address, num_cpus, quiet)
    return _native.sweep_table(json.dumps(rows))


def run(grid: Mapping[str, Any], **kwargs: Any):
    """As :func:`run_csv`, the table as a pandas DataFrame (one row per
    run, in grid order)."""
    import pandas as pd

    return pd.read_csv(io.StringIO(run_csv(grid, **kwargs)))


def _list(text: str) -> List[str]:
    """A comma-separated flag value as its items."""
    return [t.strip() for t in text.split(",") if t.strip()]


#: Command-line flags that set a grid key (comma-separated values: an axis).
_AXIS_FLAGS = [
    ("warehouses", int),
    ("mix", str),
    ("connections", int),
    ("buffer_pool", str),
    ("redo", str),
    ("page_size", str),
    ("device", str),
    ("log_device", str),
    ("warmup", str),
    ("duration", str),
    ("report_interval", str),
    ("seed", int),
    ("cpu_cores", int),
    ("workload", str),
    ("trace", str),
]


def grid_from_args(args: argparse.Namespace) -> Dict[str, Any]:
    """The grid a command line describes: ``--grid FILE``, then each flag
    given replaces that key (a comma-separated value is an axis)."""
    grid: Dict[str, Any] = load_grid(args.grid) if args.grid else {}
    if args.policies:
        grid["policy"] = _native.parse_policy_list(args.policies)
    for key, kind in _AXIS_FLAGS:
        text = getattr(args, key)
        if text is None:
            continue
        values = [kind(v) for v in _list(text)]
        grid[key] = values[0] if len(values) == 1 else values
    if args.seeds:
        grid["seed"] = [int(s) for s in _list(args.seeds)]
    if not grid:
        raise ValueError("give --grid FILE or axis flags (--policies, --buffer-pool, ...)")
    return grid


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``flushwise-sweep``: runs a grid on Ray and prints the merged table."""
    p = argparse.ArgumentParser(
        prog="flushwise-sweep",
        description="Runs a grid of flushwise simulator configurations as Ray tasks and merges the "
        "results into one table (the same as `flushwise sim sweep --grid FILE`).",
    )
    p.add_argument("--grid", metavar="FILE", help="YAML or JSON grid: sim.run options, a list is an axis")
    p.add_argument(
        "--policies", help="comma-separated policies (name or name:key=value,...): an axis, as `sim compare`"
    )
    for key, kind in _AXIS_FLAGS:
        p.add_argument("--" + key.replace("_", "-"), dest=key, metavar="V[,V...]", help=f"{key} (a list: an axis)")
    p.add_argument("--seeds", metavar="N[,N...]", help="seeds (an axis)")
    p.add_argument("--address", help="an existing Ray cluster (default: start a local Ray)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all)")
    p.add_argument("--local", action="store_true", help="no Ray: threads in this process")
    p.add_argument("--jobs", type=int, help="threads with --local (default: all cores)")
    p.add_argument("--output", choices=["csv"], default="csv", help="table format (CSV)")
    p.add_argument("--out", metavar="FILE", help="write the table to FILE instead of stdout")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    try:
        grid = grid_from_args(args)
        started = time.monotonic()
        table = run_csv(
            grid, local=args.local, address=args.address, num_cpus=args.num_cpus, jobs=args.jobs, quiet=args.quiet
        )
    except (ValueError, ImportError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(table)
    else:
        sys.stdout.write(table)
    _log(f"flushwise-sweep: done in {time.monotonic() - started:.1f} s", args.quiet)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
