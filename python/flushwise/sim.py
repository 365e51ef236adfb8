"""The deterministic simulator: one run, a comparison of policies, and
interval rows, with the command line's options and result names.

Options are the flags of ``flushwise sim run`` with ``_`` for ``-``:
``workload`` (``"tpcc"`` or ``"trace"``), ``trace`` (a trace file),
``warehouses``, ``mix`` (``"standard"``, ``"read-mostly"``), ``connections``,
``buffer_pool``, ``redo``, ``page_size`` (sizes as ``"64MiB"`` or bytes),
``device``, ``log_device``, ``warmup``, ``duration``, ``report_interval``
(durations as ``"30s"``, ``"5m"`` or seconds), ``seed``, ``cpu_cores`` and
``policy`` (``"name"`` or ``"name:key=value,..."``). Any option left out
takes the command line's default. The same options and seed give the same
result, bit for bit.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from . import _native
from ._common import frame, options_json, split_json_lines

Size = Union[str, int]
Duration = Union[str, int, float]


@dataclasses.dataclass
class SimConfig:
    """A simulator run's options; ``None`` means the command line's default.

    Sizes are text with a unit (``"64MiB"``) or bytes; durations text with a
    unit (``"30s"``) or seconds.
    """

    workload: Optional[str] = None
    trace: Optional[Union[str, "os.PathLike[str]"]] = None
    warehouses: Optional[int] = None
    mix: Optional[str] = None
    connections: Optional[int] = None
    buffer_pool: Optional[Size] = None
    redo: Optional[Size] = None
    page_size: Optional[Size] = None
    device: Optional[str] = None
    log_device: Optional[str] = None
    warmup: Optional[Duration] = None
    duration: Optional[Duration] = None
    seed: Optional[int] = None
    cpu_cores: Optional[int] = None
    report_interval: Optional[Duration] = None
    policy: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """The options given (not ``None``), as a dict."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


#: Options that are whole numbers (the others take text, or numbers as bytes / seconds).
_WHOLE_NUMBERS = ("warehouses", "connections", "seed", "cpu_cores")

ConfigLike = Union[Mapping[str, Any], SimConfig, None]


def _options(config: ConfigLike, overrides: Mapping[str, Any]) -> Dict[str, Any]:
    """``config`` (dict, SimConfig or None) with ``overrides`` on top; whole-number
    options checked here, where the option can still be named."""
    if config is None:
        merged: Dict[str, Any] = {}
    elif isinstance(config, SimConfig):
        merged = config.to_dict()
    elif isinstance(config, Mapping):
        merged = dict(config)
    else:
        raise TypeError(f"config: a dict or flushwise.sim.SimConfig is expected, not {type(config).__name__}")
    merged.update(overrides)
    for key in _WHOLE_NUMBERS:
        value = merged.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{key} {value!r}: a whole number is expected")
    return merged


def defaults() -> Dict[str, Any]:
    """Every option's default (the command line's), as a dict."""
    return json.loads(_native.SIM_DEFAULTS)


def run(
    config: ConfigLike = None, *, with_intervals: bool = False, **options: Any
) -> Union[Dict[str, Any], Tuple[Dict[str, Any], "pd.DataFrame"]]:
    """Runs the simulator once; returns the result dict.

    ``config`` is a dict or :class:`SimConfig`; keyword ``options`` override
    it. The dict has the keys of ``flushwise sim run --output json``'s
    result line (``kind``, ``shell``, ``policy``, ``nopm``,
    ``sync_write_pct``, ``io_per_txn``, ``hit_ratio``, ``final_parameters``,
    ``latency``, ``config_hash``, ``seed``, ``commit``, ...). With
    ``with_intervals=True`` returns ``(result, intervals)``, the interval
    rows as a DataFrame. The GIL is released while the simulation runs.

    Raises ``ValueError`` naming the option for bad input (an unknown key,
    ``buffer_pool="12QB"``, an unknown policy or parameter).
    """
    text = _native.sim_run(options_json(_options(config, options)))
    runs = split_json_lines(text)
    result, rows = runs[0]
    if with_intervals:
        return result, frame(rows)
    return result


def run_intervals(config: ConfigLike = None, **options: Any) -> "pd.DataFrame":
    """Runs the simulator once; returns its interval rows as a DataFrame
    (one row per report interval, warm-up rows with ``warmup`` True and
    negative ``time_s``; the policy's parameters as ``param_*``)."""
    _, rows = run(config, with_intervals=True, **options)
    return rows


def compare(
    policies: Optional[Sequence[str]] = None,
    config: ConfigLike = None,
    *,
    jobs: Optional[int] = None,
    **options: Any,
) -> "pd.DataFrame":
    """Runs the same configuration under each policy; returns a DataFrame
    with one row per policy, in the order given (columns as ``flushwise sim
    compare --output csv``'s).

    ``policies`` is a list of ``"name"`` / ``"name:key=value,..."`` or one
    comma-separated string as the command line takes it; ``None`` runs every
    registered policy. ``jobs`` runs in parallel (default: the machine's
    cores). Other keyword options are as for :func:`run` (``policy`` is not
    accepted here).
    """
    merged = _options(config, options)
    if "policy" in merged:
        raise ValueError("policy: compare takes policies=[...], not policy")
    if policies is None:
        names = [p["name"] for p in json.loads(_native.policies())]
    elif isinstance(policies, str):
        names = _native.parse_policy_list(policies)
    else:
        names = [str(p) for p in policies]
    text = _native.sim_compare(options_json(merged), names, jobs or (os.cpu_count() or 1))
    return frame(result for result, _ in split_json_lines(text))


def compare_runs(
    policies: Sequence[str], config: ConfigLike = None, *, jobs: Optional[int] = None, **options: Any
) -> List[Tuple[Dict[str, Any], Any]]:
    """As :func:`compare`, but each run's result dict and interval DataFrame."""
    merged = _options(config, options)
    names = _native.parse_policy_list(policies) if isinstance(policies, str) else [str(p) for p in policies]
    text = _native.sim_compare(options_json(merged), names, jobs or (os.cpu_count() or 1))
    return [(result, frame(rows)) for result, rows in split_json_lines(text)]
