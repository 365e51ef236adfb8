"""Type stubs of the extension module ``flushwise._native`` (Rust, PyO3).

The boundary is text-shaped: options go in as JSON objects, results come
back as the command line's ``--output json`` lines or JSON; the modules
``flushwise.sim``, ``trace``, ``engine`` and ``sweep`` wrap it.
"""

from typing import List, Optional, Tuple

COMMIT: str
DEFAULT_POLICY: str
SIM_DEFAULTS: str
WALL_CLOCK_COLUMNS: List[str]

def sim_run(options: str) -> str:
    """One simulator run of ``options`` (JSON); its ``--output json`` lines."""

def sim_compare(options: str, policies: List[str], jobs: int) -> str:
    """The same run under each policy on ``jobs`` threads; JSON lines in order."""

def parse_policy_list(text: str) -> List[str]:
    """A comma-separated policy list as the command line reads it."""

def policies() -> str:
    """Every registered policy and its parameters, as JSON."""

def sweep_expand(grid: str) -> str:
    """A sweep grid's runs (JSON list of option objects), each checked."""

def sweep_row(index: int, options: str) -> str:
    """Runs one run of a sweep; its row as JSON ``[[column, cell], ...]``."""

def sweep_table(rows: str) -> str:
    """Rows (JSON) as the lab's CSV table."""

def sweep_run(grid: str, jobs: int) -> str:
    """A whole grid on ``jobs`` threads, as ``flushwise sim sweep``; CSV."""

def trace_read(path: str, limit: Optional[int] = None) -> Tuple[str, List[bytes]]:
    """A trace's header (JSON) and its eight columns as little-endian bytes."""

def trace_write(
    path: str,
    page_size_bytes: int,
    description: str,
    agent: bytes,
    event: bytes,
    space: bytes,
    page_no: bytes,
    exclusive: bytes,
    modified: bytes,
    redo_bytes: bytes,
    txn_type: bytes,
) -> int:
    """Writes a trace from columns; returns the records written."""

def trace_record_model(
    path: str, warehouses: int, connections: int, transactions: int, seed: int, page_size: str
) -> int:
    """Writes a TPC-C model trace; returns the records written."""

def tpcc_prepare(options: str) -> str:
    """Creates and loads a TPC-C database (JSON options); its summary line."""

def tpcc_run(options: str) -> str:
    """One TPC-C run on the engine (JSON options); its ``--output json`` lines."""
