"""Page-reference traces (``crates/trace/FORMAT.md``) as pandas DataFrames:
read one, write one, record the TPC-C model's.

A trace's DataFrame has one row per record: ``agent`` (uint32), ``event``
(categorical: fix, unfix, txn_begin, txn_commit, txn_rollback), ``space``
and ``page_no`` (uint32; 0 for transaction records), ``exclusive`` and
``modified`` (bool), ``redo_bytes`` (uint32) and ``txn_type`` (categorical:
new_order, payment, order_status, delivery, stock_level, other; missing for
page records). ``df.attrs["header"]`` holds the file's header
(``page_size_bytes``, ``flags``, ``description``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

EVENTS = ["fix", "unfix", "txn_begin", "txn_commit", "txn_rollback"]
TXN_TYPES = {0: "new_order", 1: "payment", 2: "order_status", 3: "delivery", 4: "stock_level", 255: "other"}
_NO_TXN = 254


def read(path: PathLike, limit: Optional[int] = None):
    """Reads a trace file (at most ``limit`` records) into a DataFrame.

    The whole file's checksums are verified as it is read; a damaged or cut
    trace raises ``ValueError`` naming the byte offset.
    """
    import numpy as np
    import pandas as pd

    header, cols = _native.trace_read(os.fspath(path), limit)
    agent, event, space, page_no, exclusive, modified, redo, txn = cols
    event_codes = np.frombuffer(event, dtype=np.uint8)
    txn_codes = np.frombuffer(txn, dtype=np.uint8)
    txn_names = pd.Series(txn_codes).map(TXN_TYPES)
    df = pd.DataFrame(
        {
            "agent": np.frombuffer(agent, dtype="<u4"),
            "event": pd.Categorical.from_codes(event_codes.astype(np.int8), categories=EVENTS),
            "space": np.frombuffer(space, dtype="<u4"),
            "page_no": np.frombuffer(page_no, dtype="<u4"),
            "exclusive": np.frombuffer(exclusive, dtype=np.uint8).astype(bool),
            "modified": np.frombuffer(modified, dtype=np.uint8).astype(bool),
            "redo_bytes": np.frombuffer(redo, dtype="<u4"),
            "txn_type": pd.Categorical(txn_names, categories=list(TXN_TYPES.values())),
        }
    )
    df.attrs["header"] = json.loads(header)
    return df


def header(path: PathLike) -> Dict[str, Any]:
    """A trace's header (``page_size_bytes``, ``flags``, ``description``);
    reads no record."""
    h, _ = _native.trace_read(os.fspath(path), 0)
    return json.loads(h)


def write(path: PathLike, df: Any, page_size: int = 16384, description: str = "") -> int:
    """Writes a DataFrame laid out as :func:`read` returns it to a trace
    file; returns the records written. Every record is validated first (an
    unfix carries redo only if modified, transaction records carry a
    type); a bad one raises ``ValueError`` naming its row."""
    import numpy as np
    import pandas as pd

    n = len(df)
    event = pd.Categorical(df["event"], categories=EVENTS)
    if (event.codes < 0).any():
        raise ValueError(f"event: accepted values are {', '.join(EVENTS)}")
    names = {v: k for k, v in TXN_TYPES.items()}
    txn = np.array(
        [_NO_TXN if (t is None or (isinstance(t, float) and t != t)) else names.get(str(t), -1) for t in df["txn_type"]],
        dtype=np.int16,
    )
    if (txn < 0).any():
        raise ValueError(f"txn_type: accepted values are {', '.join(TXN_TYPES.values())} or missing")
    page_events = event.codes <= 1
    txn = np.where(page_events, 0, txn)

    def col(name: str, dtype: Any) -> bytes:
        """Column ``name`` as contiguous little-endian bytes of ``dtype``."""
        return np.ascontiguousarray(np.asarray(df[name]).astype(dtype)).tobytes()

    return _native.trace_write(
        os.fspath(path),
        int(page_size),
        description,
        col("agent", "<u4"),
        event.codes.astype(np.uint8).tobytes(),
        col("space", "<u4"),
        col("page_no", "<u4"),
        col("exclusive", np.uint8),
        col("modified", np.uint8),
        col("redo_bytes", "<u4"),
        np.where(txn == _NO_TXN, 255, txn).astype(np.uint8).tobytes() if n else b"",
    )


def record_model(
    path: PathLike,
    warehouses: int = 10,
    connections: int = 20,
    transactions: int = 10_000,
    seed: int = 1,
    page_size: Union[int, str] = 16384,
) -> int:
    """Writes the TPC-C model's page references for ``transactions``
    transactions of ``connections`` agents to ``path``, as ``flushwise trace
    record-model`` does; returns the records written."""
    return _native.trace_record_model(
        os.fspath(path), int(warehouses), int(connections), int(transactions), int(seed), str(page_size)
    )
