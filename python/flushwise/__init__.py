"""flushwise from Python: the deterministic simulator, page-reference traces,
the real engine's TPC-C and sweeps of simulator runs on Ray.

Results use the command line's one vocabulary: ``flushwise.sim.run`` returns
the same dict as ``flushwise sim run --output json``'s result line, and
tables are pandas DataFrames whose columns are ``--output csv``'s.

Modules:

- :mod:`flushwise.sim`: ``run``, ``compare``, ``run_intervals``, ``SimConfig``;
- :mod:`flushwise.trace`: ``read``, ``write``, ``record_model``;
- :mod:`flushwise.engine`: ``tpcc_prepare``, ``tpcc_run``;
- :mod:`flushwise.sweep`: grids of simulator runs, locally or on Ray
  (the ``flushwise-sweep`` command).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

from . import _native
from . import engine, sim, sweep, trace

__all__ = ["sim", "trace", "engine", "sweep", "policies", "COMMIT", "DEFAULT_POLICY", "__version__"]

__version__ = "0.1.0"

#: The git commit the extension was built from; every result carries it.
COMMIT: str = _native.COMMIT

#: The policy a run uses when none is named.
DEFAULT_POLICY: str = _native.DEFAULT_POLICY


def policies() -> List[Dict[str, Any]]:
    """Every registered page-cleaning policy and its declared parameters.

    Returns a list of dicts, one per policy in registry order:
    ``{"name", "about", "default" (True for the default policy), "params"}``,
    where ``params`` is a list of ``{"key", "type", "default", "accepted",
    "doc"}`` (``flushwise policies`` prints the same). A policy with
    parameters is named ``"name:key=value,key=value"`` wherever a policy is
    accepted.
    """
    return json.loads(_native.policies())
