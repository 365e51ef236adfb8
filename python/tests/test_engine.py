"""flushwise.engine: a tiny TPC-C prepare and run on the real engine."""

from __future__ import annotations

import pytest

import flushwise


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    d = tmp_path_factory.mktemp("engine") / "w1"
    summary = flushwise.engine.tpcc_prepare(d, warehouses=1, io="buffered", redo="16MiB", buffer_pool="32MiB")
    assert "prepared 1 warehouses" in summary
    return d


def test_tpcc_run_on_the_engine_returns_the_result_dict(prepared):
    result, intervals = flushwise.engine.tpcc_run(
        prepared,
        "mysql56",
        io="buffered",
        connections=2,
        buffer_pool="8MiB",
        warmup="1s",
        duration="2s",
        report_interval="1s",
        with_intervals=True,
    )
    assert result["kind"] == "result" and result["shell"] == "engine"
    assert result["policy"] == "mysql56"
    assert result["warehouses"] == 1 and result["connections"] == 2
    assert result["transactions"] > 0 and result["nopm"] > 0
    assert result["flush_log_at_trx_commit"] == 1
    assert result["simulated_seconds"] is None
    assert result["commit"] == flushwise.COMMIT
    # Same vocabulary as the simulator's result.
    sim_keys = set(flushwise.sim.run(warehouses=1, buffer_pool="4MiB", warmup="1s", duration="1s"))
    assert set(result) == sim_keys
    assert len(intervals) >= 2


def test_prepare_refuses_a_prepared_directory(prepared):
    with pytest.raises(ValueError, match="already"):
        flushwise.engine.tpcc_prepare(prepared, warehouses=1, io="buffered", redo="16MiB")


def test_bad_engine_input_raises_value_error(prepared, tmp_path):
    with pytest.raises(ValueError, match="--buffer-pool"):
        flushwise.engine.tpcc_run(prepared, io="buffered", buffer_pool="1KiB", duration="1s")
    with pytest.raises(ValueError, match="--flush-log-at-commit"):
        flushwise.engine.tpcc_run(prepared, io="buffered", flush_log_at_commit=3, duration="1s")
    with pytest.raises(ValueError, match="nosuch"):
        flushwise.engine.tpcc_run(prepared, "nosuch", io="buffered", duration="1s")
    with pytest.raises(ValueError):
        flushwise.engine.tpcc_run(tmp_path / "empty", io="buffered", duration="1s")
