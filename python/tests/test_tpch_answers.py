"""The 22 TPC-H queries of ``flushwise tpch answers`` against DuckDB.

A database of scale factor 0.01 is prepared with the ``flushwise`` binary,
exported as CSV and loaded into DuckDB with the standard TPC-H column types
(TPC-H 3.0.1, clause 1.4.1); the standard query texts with the validation
parameters (``tpch_sql/qNN.sql``) run in DuckDB and each answer is compared
with ours row by row. Our plans are hand-built (``crates/workloads/src/
tpch/query``), so DuckDB's optimiser and executor are an independent
implementation of the same query texts over the same data.

Skipped when no binary is built (like the other CLI tests) or when DuckDB
is not installed, unless FLUSHWISE_REQUIRE_DUCKDB=1 is set (test.sh sets
it): then a missing DuckDB fails.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pytest

SQL_DIR = Path(__file__).resolve().parent / "tpch_sql"
#: Scale factors checked: 0.01 (the issue's CI size) and 0.1, where the
#: validation values of Q17 and Q18 select rows (at 0.01 Q18 returns none
#: and Q17's sum is NULL, which would leave those plans unchecked).
SCALE_FACTORS = (0.01, 0.1)

#: Columns in the order of clause 1.4.1 (and of ``schema.rs``'s COLUMNS,
#: the CSV header), with the standard types: identifiers BIGINT, integers
#: INTEGER, decimals DECIMAL(15,2), fixed text CHAR(n), variable text
#: VARCHAR(n) (DuckDB stores both as VARCHAR).
TABLES: Dict[str, List[Tuple[str, str]]] = {
    "region": [("r_regionkey", "BIGINT"), ("r_name", "CHAR(25)"), ("r_comment", "VARCHAR(152)")],
    "nation": [
        ("n_nationkey", "BIGINT"),
        ("n_name", "CHAR(25)"),
        ("n_regionkey", "BIGINT"),
        ("n_comment", "VARCHAR(152)"),
    ],
    "supplier": [
        ("s_suppkey", "BIGINT"),
        ("s_name", "CHAR(25)"),
        ("s_address", "VARCHAR(40)"),
        ("s_nationkey", "BIGINT"),
        ("s_phone", "CHAR(15)"),
        ("s_acctbal", "DECIMAL(15,2)"),
        ("s_comment", "VARCHAR(101)"),
    ],
    "customer": [
        ("c_custkey", "BIGINT"),
        ("c_name", "VARCHAR(25)"),
        ("c_address", "VARCHAR(40)"),
        ("c_nationkey", "BIGINT"),
        ("c_phone", "CHAR(15)"),
        ("c_acctbal", "DECIMAL(15,2)"),
        ("c_mktsegment", "CHAR(10)"),
        ("c_comment", "VARCHAR(117)"),
    ],
    "part": [
        ("p_partkey", "BIGINT"),
        ("p_name", "VARCHAR(55)"),
        ("p_mfgr", "CHAR(25)"),
        ("p_brand", "CHAR(10)"),
        ("p_type", "VARCHAR(25)"),
        ("p_size", "INTEGER"),
        ("p_container", "CHAR(10)"),
        ("p_retailprice", "DECIMAL(15,2)"),
        ("p_comment", "VARCHAR(23)"),
    ],
    "partsupp": [
        ("ps_partkey", "BIGINT"),
        ("ps_suppkey", "BIGINT"),
        ("ps_availqty", "INTEGER"),
        ("ps_supplycost", "DECIMAL(15,2)"),
        ("ps_comment", "VARCHAR(199)"),
    ],
    "orders": [
        ("o_orderkey", "BIGINT"),
        ("o_custkey", "BIGINT"),
        ("o_orderstatus", "CHAR(1)"),
        ("o_totalprice", "DECIMAL(15,2)"),
        ("o_orderdate", "DATE"),
        ("o_orderpriority", "CHAR(15)"),
        ("o_clerk", "CHAR(15)"),
        ("o_shippriority", "INTEGER"),
        ("o_comment", "VARCHAR(79)"),
    ],
    "lineitem": [
        ("l_orderkey", "BIGINT"),
        ("l_partkey", "BIGINT"),
        ("l_suppkey", "BIGINT"),
        ("l_linenumber", "INTEGER"),
        ("l_quantity", "DECIMAL(15,2)"),
        ("l_extendedprice", "DECIMAL(15,2)"),
        ("l_discount", "DECIMAL(15,2)"),
        ("l_tax", "DECIMAL(15,2)"),
        ("l_returnflag", "CHAR(1)"),
        ("l_linestatus", "CHAR(1)"),
        ("l_shipdate", "DATE"),
        ("l_commitdate", "DATE"),
        ("l_receiptdate", "DATE"),
        ("l_shipinstruct", "CHAR(25)"),
        ("l_shipmode", "CHAR(10)"),
        ("l_comment", "VARCHAR(44)"),
    ],
}

#: Output columns of each query's ORDER BY, most significant first (0-based
#: positions in the SELECT list). Where these columns do not determine
#: the order (SQL leaves the order of equal keys open), rows with equal
#: keys are compared as multisets: Q3 (revenue, o_orderdate), Q5
#: (revenue), Q10 (revenue), Q11 (value), Q18 (o_totalprice, o_orderdate)
#: and Q20 (s_name, unique in the data but not by the text). In every
#: other query the keys include the GROUP BY columns or a unique column,
#: so each group of equal keys is one row and the comparison is in order.
ORDER_KEYS: Dict[int, List[int]] = {
    1: [0, 1],
    2: [0, 2, 1, 3],
    3: [1, 2],
    4: [0],
    5: [1],
    6: [],
    7: [0, 1, 2],
    8: [0],
    9: [0, 1],
    10: [2],
    11: [1],
    12: [0],
    13: [1, 0],
    14: [],
    15: [0],
    16: [3, 0, 1, 2],
    17: [],
    18: [4, 3],
    19: [],
    20: [0],
    21: [1, 0],
    22: [0],
}

#: Row limits of the standard texts. When a result is cut at its limit,
#: rows tied on the ORDER BY keys at the cut may be any of the tied rows;
#: there only the keys and the number of rows of that last group are
#: compared.
LIMITS = {2: 100, 3: 10, 10: 20, 18: 100, 21: 100}

TWO_PLACES = Decimal("0.01")
#: Sums over the whole database reach 10^9 at SF 0.01 (10^11 at SF 1):
#: beyond 10^7, 1e-9 relative is the wider bound.
RELATIVE = Decimal("1e-9")


def _run(binary: Path, args: List[str]) -> str:
    out = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        pytest.fail(f"flushwise {' '.join(args)} exited with {out.returncode}:\n{out.stderr}")
    return out.stdout


def _duckdb() -> Any:
    try:
        import duckdb  # type: ignore[import-not-found]
    except ImportError as e:
        if os.environ.get("FLUSHWISE_REQUIRE_DUCKDB") == "1":
            pytest.fail(f"FLUSHWISE_REQUIRE_DUCKDB=1 but duckdb cannot be imported: {e}")
        pytest.skip("duckdb is not installed (pip install duckdb)")
    return duckdb


@pytest.fixture(scope="module", params=SCALE_FACTORS, ids=lambda sf: f"sf{sf}")
def tpch(flushwise_bin, tmp_path_factory, request):
    """(our answers by query number, a DuckDB connection with the same data)."""
    sf = request.param
    duckdb = _duckdb()
    if flushwise_bin is None:
        pytest.skip("no flushwise binary built")
    root = tmp_path_factory.mktemp("tpch")
    db_dir, csv_dir = root / "db", root / "csv"
    io = ["--io", "buffered"]  # any filesystem, also a tmpfs
    _run(flushwise_bin, ["tpch", "prepare", "--dir", str(db_dir), "--sf", str(sf), "--redo", "64MiB", *io])
    _run(flushwise_bin, ["tpch", "export", "--dir", str(db_dir), "--out", str(csv_dir), *io])
    doc = json.loads(_run(flushwise_bin, ["tpch", "answers", "--dir", str(db_dir), "--output", "json", *io]))
    assert doc["sf"] == sf
    answers = {q["query"]: q for q in doc["queries"]}
    assert sorted(answers) == list(range(1, 23))

    con = duckdb.connect()
    for table, columns in TABLES.items():
        path = csv_dir / f"{table}.csv"
        with open(path, encoding="ascii") as f:
            header = f.readline().rstrip("\r\n").split(",")
        assert header == [c for c, _ in columns], f"{path}: header {header}"
        con.execute(f"create table {table} ({', '.join(f'{c} {t}' for c, t in columns)})")
        con.execute(
            f"copy {table} from '{path}' (format csv, header true, delimiter ',', quote '\"', escape '\"')"
        )
    yield answers, con
    con.close()


def _as_decimal(value: Any) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(str(value))


def _numbers_match(ours: Any, theirs: Any) -> bool:
    """Clause 2.1.3.5 compares answers after rounding to the nearest 1/100
    (sums within $100, averages and ratios within 1% of the validation
    output). Both sides here compute from the same rows, so we are much
    stricter: an exact decimal of ours (a JSON string) against an exact
    DECIMAL of DuckDB must be equal; anything involving a float (averages,
    ratios, Q17's division) must be equal after rounding both to 2 places,
    within 0.01 (one unit of the last place: a rounding boundary between
    two nearby floats) or 1e-9 relative for large sums."""
    a, b = _as_decimal(ours), _as_decimal(theirs)
    if isinstance(ours, str) and isinstance(theirs, Decimal):
        return a == b
    ra = a.quantize(TWO_PLACES, rounding=ROUND_HALF_UP)
    rb = b.quantize(TWO_PLACES, rounding=ROUND_HALF_UP)
    return abs(ra - rb) <= max(TWO_PLACES, abs(rb) * RELATIVE)


def _values_match(ours: Any, theirs: Any) -> bool:
    if theirs is None or ours is None:
        return theirs is None and ours is None
    if isinstance(theirs, bool):
        return ours == theirs
    if isinstance(theirs, int):
        return isinstance(ours, int) and not isinstance(ours, bool) and ours == theirs
    if isinstance(theirs, (Decimal, float)):
        return isinstance(ours, (int, float, str)) and _numbers_match(ours, theirs)
    if isinstance(theirs, datetime.date):
        return ours == theirs.isoformat()
    if isinstance(theirs, str):
        return isinstance(ours, str) and ours.rstrip() == theirs.rstrip()
    raise AssertionError(f"unexpected DuckDB value {theirs!r} ({type(theirs).__name__})")


def _exact(value: Any, like: Any) -> Tuple[int, Any]:
    """`value` (of either side) as a key that compares exactly and alike
    on both sides: numbers by their exact value (our decimal text parsed
    when DuckDB's column, as seen in `like`, is numeric), dates as ISO
    text, text without trailing blanks."""
    if value is None:
        return (0, "")
    if isinstance(value, datetime.date):
        return (1, value.isoformat())
    if isinstance(value, str) and isinstance(like, datetime.date):
        return (1, value)
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return (2, _as_decimal(value))
    if isinstance(value, str) and isinstance(like, (Decimal, float)):
        return (2, Decimal(value))
    return (3, str(value).rstrip())


def _groups(keyed: Sequence[Sequence[Tuple[int, Any]]], keys: List[int]) -> List[Tuple[int, int]]:
    """(start, end) of the runs of consecutive rows with equal ORDER BY
    keys, on rows already made exact."""
    out: List[Tuple[int, int]] = []
    for i, row in enumerate(keyed):
        if out and all(row[k] == keyed[out[-1][0]][k] for k in keys):
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _assert_same_answer(query: int, where: str, columns: List[str], mine: List[List[Any]], theirs: List[Any]) -> None:
    """Our rows (JSON values) against DuckDB's, by the rules above."""
    assert len(mine) == len(theirs), f"{where}: {len(mine)} rows, DuckDB {len(theirs)}"
    # DuckDB's type of each column, from its first non-NULL value.
    like = [next((r[c] for r in theirs if r[c] is not None), None) for c in range(len(columns))]
    mine_exact = [[_exact(v, t) for v, t in zip(r, like)] for r in mine]
    theirs_exact = [[_exact(v, t) for v, t in zip(r, like)] for r in theirs]
    keys = ORDER_KEYS[query]
    my_groups, their_groups = _groups(mine_exact, keys), _groups(theirs_exact, keys)
    assert [e - s for s, e in my_groups] == [e - s for s, e in their_groups], f"{where}: ORDER BY ties differ"
    cut = query in LIMITS and len(theirs) == LIMITS[query]
    for g, ((ms, me), (ts, te)) in enumerate(zip(my_groups, their_groups)):
        for k in keys:
            a, b = mine[ms][k], theirs[ts][k]
            assert _values_match(a, b), f"{where}: row {ms}, {columns[k]}: ours {a!r}, DuckDB {b!r}"
        if cut and g == len(their_groups) - 1 and te - ts > 1:
            continue  # which of the rows tied at the limit made the cut is open
        # Within a run of equal keys the order is open: pair rows by
        # their exact values.
        my_rows = sorted(range(ms, me), key=lambda i: mine_exact[i])
        their_rows = sorted(range(ts, te), key=lambda i: theirs_exact[i])
        for i, j in zip(my_rows, their_rows):
            for c, (a, b) in enumerate(zip(mine[i], theirs[j])):
                assert _values_match(a, b), f"{where}: {columns[c]}: ours {a!r}, DuckDB {b!r}\n{mine[i]}\n{theirs[j]}"


@pytest.mark.parametrize("query", range(1, 23))
def test_answer_matches_duckdb(tpch, query):
    answers, con = tpch
    ours = answers[query]
    sql = (SQL_DIR / f"q{query:02d}.sql").read_text()
    cursor = con.execute(sql)
    theirs = cursor.fetchall()
    columns = [d[0].lower() for d in cursor.description]
    where = f"Q{query} ({ours['params']})"
    assert ours["columns"] == columns, where
    _assert_same_answer(query, where, columns, ours["rows"], theirs)


def test_comparison_allows_only_the_freedom_sql_leaves():
    """The comparison itself, on made-up rows (needs neither the binary
    nor DuckDB)."""
    d = datetime.date
    cols = ["l_orderkey", "revenue", "o_orderdate", "o_shippriority"]
    duck = [(7, Decimal("10.0000"), d(1995, 1, 2), 0), (3, Decimal("10.0000"), d(1995, 1, 2), 0)]
    # Q3's rows tied on (revenue, o_orderdate) may come in either order.
    _assert_same_answer(3, "Q3", cols, [[3, "10.0000", "1995-01-02", 0], [7, "10.0000", "1995-01-02", 0]], duck)
    # ... but their values must match exactly, and untied rows in order.
    with pytest.raises(AssertionError):
        _assert_same_answer(3, "Q3", cols, [[3, "10.0001", "1995-01-02", 0], [7, "10.0000", "1995-01-02", 0]], duck)
    with pytest.raises(AssertionError):
        _assert_same_answer(1, "Q1", ["a", "b"], [["N", 1], ["A", 2]], [("A", 2), ("N", 1)])
    # At a LIMIT, the tied rows at the cut may be different ones.
    tied = [(k, Decimal("5.0000"), d(1995, 1, 1), 0) for k in range(10)]
    ours_cut = [[k + 100, "5.0000", "1995-01-01", 0] for k in range(10)]
    _assert_same_answer(3, "Q3", cols, ours_cut, tied)
    five = [("X", Decimal(5)), ("Y", Decimal(5))]
    with pytest.raises(AssertionError):
        _assert_same_answer(5, "Q5", ["n_name", "revenue"], [["X", "5.0000"]] * 2, five)
    # Floats (averages, ratios) match after rounding to 2 places, within
    # one unit of the last place.
    _assert_same_answer(17, "Q17", ["avg_yearly"], [[14.285714285714286]], [(14.2857142857,)])
    with pytest.raises(AssertionError):
        _assert_same_answer(17, "Q17", ["avg_yearly"], [[14.31]], [(14.2857142857,)])
    _assert_same_answer(17, "Q17", ["avg_yearly"], [[None]], [(None,)])
    with pytest.raises(AssertionError):
        _assert_same_answer(17, "Q17", ["avg_yearly"], [[0.0]], [(None,)])
