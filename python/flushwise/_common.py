"""Shared helpers: options to the extension's JSON, its JSON lines back to
dicts, and results flattened into table rows as the command line's CSV
flattens them (``param_*``, ``latency_<txn>_<field>``, ``mix_pct_*``)."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Tuple

#: Keys of the result that only one shell fills are ``None`` for the other.
Result = Dict[str, Any]


def options_json(options: Mapping[str, Any]) -> str:
    """JSON text of an options mapping; ``None`` values are left out (the
    default applies) and paths become strings."""
    clean: Dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        if hasattr(value, "__fspath__"):
            value = str(value)
        clean[key] = value
    return json.dumps(clean)


def split_json_lines(text: str) -> List[Tuple[Result, List[Result]]]:
    """The runs of ``--output json`` lines: (result, its interval rows)."""
    runs: List[Tuple[Result, List[Result]]] = []
    rows: List[Result] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj.get("kind") == "interval":
            rows.append(obj)
        else:
            runs.append((obj, rows))
            rows = []
    return runs


def _cell(value: Any) -> Any:
    """A nested value as compact JSON text (as the CSV writes it); scalars as they are."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return value


def flatten(record: Mapping[str, Any]) -> Dict[str, Any]:
    """One result or interval row as a flat table row, named as the
    command line's CSV names its columns (the JSON lines' ``kind`` is left
    out: a table holds one kind)."""
    out: Dict[str, Any] = {}
    for key, value in record.items():
        if key == "kind":
            continue
        if key in ("final_parameters", "parameters", "mix_pct") and isinstance(value, list):
            prefix = "mix_pct_" if key == "mix_pct" else "param_"
            for pair in value:
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str):
                    out[prefix + pair[0]] = pair[1]
        elif key == "latency" and isinstance(value, list):
            for summary in value:
                if not isinstance(summary, dict):
                    continue
                txn = summary.get("txn_type", "")
                for field, v in summary.items():
                    if field != "txn_type":
                        out[f"latency_{txn}_{field}"] = v
        else:
            out[key] = _cell(value)
    return out


def frame(records: Iterable[Mapping[str, Any]]):  # -> pandas.DataFrame
    """Flattened records as a DataFrame (columns: the union, first-seen order)."""
    import pandas as pd

    return pd.DataFrame([flatten(r) for r in records])
