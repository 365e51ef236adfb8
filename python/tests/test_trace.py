"""flushwise.trace: record, read, write back, replay; damage is an error."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest

import flushwise

from conftest import SMALL, without_wall


@pytest.fixture(scope="module")
def tiny_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "tiny.fwtrace"
    n = flushwise.trace.record_model(path, warehouses=1, connections=4, transactions=200, seed=5)
    return path, n


def test_record_and_read_round_trip(tiny_trace, tmp_path):
    path, n = tiny_trace
    df = flushwise.trace.read(path)
    assert len(df) == n > 0
    assert list(df.columns) == [
        "agent", "event", "space", "page_no", "exclusive", "modified", "redo_bytes", "txn_type",
    ]
    counts = df["event"].value_counts()
    assert counts["fix"] == counts["unfix"]
    assert counts["txn_begin"] == 200
    assert df.loc[df["event"] == "fix", "txn_type"].isna().all()
    assert set(df.loc[df["event"] == "txn_begin", "txn_type"]) <= {
        "new_order", "payment", "order_status", "delivery", "stock_level",
    }
    assert (df.loc[~df["modified"], "redo_bytes"] == 0).all()
    header = df.attrs["header"]
    assert header["page_size_bytes"] == 16384 and "transactions=200" in header["description"]
    assert flushwise.trace.header(path) == header

    copy = tmp_path / "copy.fwtrace"
    assert flushwise.trace.write(copy, df, page_size=16384, description=header["description"]) == n
    again = flushwise.trace.read(copy)
    pd.testing.assert_frame_equal(df, again)
    assert copy.read_bytes() == path.read_bytes()


def test_limit_reads_a_prefix(tiny_trace):
    path, _ = tiny_trace
    assert len(flushwise.trace.read(path, limit=10)) == 10


def test_cli_reads_the_trace_the_api_wrote(tiny_trace, flushwise_bin):
    if flushwise_bin is None:
        pytest.skip("no flushwise binary built")
    path, n = tiny_trace
    out = subprocess.run([str(flushwise_bin), "trace", "info", str(path)], capture_output=True, text=True, check=True)
    assert str(n) in out.stdout.replace(",", "")


def test_the_simulator_replays_a_trace(tiny_trace):
    path, _ = tiny_trace
    options = dict(SMALL, workload="trace", trace=str(path), warmup="0s", duration="60s")
    options.pop("warehouses")
    a = flushwise.sim.run(options, policy="mysql56")
    b = flushwise.sim.run(options, policy="mysql56")
    assert a["workload"].startswith("trace") or "trace" in a["workload"]
    assert a["transactions"] > 0
    assert without_wall(a) == without_wall(b)


def test_a_damaged_trace_raises_value_error_naming_the_offset(tiny_trace, tmp_path):
    path, _ = tiny_trace
    data = bytearray(path.read_bytes())
    data[200] ^= 0xFF
    bad = tmp_path / "bad.fwtrace"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="offset"):
        flushwise.trace.read(bad)
    cut = tmp_path / "cut.fwtrace"
    cut.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError):
        flushwise.trace.read(cut)
    with pytest.raises(ValueError, match="cannot open"):
        flushwise.trace.read(tmp_path / "missing.fwtrace")


def test_write_refuses_a_bad_record(tiny_trace, tmp_path):
    path, _ = tiny_trace
    df = flushwise.trace.read(path, limit=4).copy()
    unfix = df.index[df["event"] == "unfix"][0]
    df.loc[unfix, "modified"] = False
    df.loc[unfix, "redo_bytes"] = 100
    with pytest.raises(ValueError, match="row"):
        flushwise.trace.write(tmp_path / "x.fwtrace", df)
