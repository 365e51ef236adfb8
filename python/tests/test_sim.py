"""flushwise.sim: the same result as the CLI, DataFrames, errors, determinism."""

from __future__ import annotations

import pandas as pd
import pytest

import flushwise
from flushwise.sim import SimConfig

from conftest import SMALL, cli_flags, cli_json, without_wall


def test_run_returns_the_cli_json_result_for_the_same_config(flushwise_bin):
    options = dict(SMALL, policy="mysql56", seed=7)
    result, intervals = flushwise.sim.run(options, with_intervals=True)
    if flushwise_bin is None:
        pytest.skip("no flushwise binary built (cargo build --release -p flushwise-cli)")
    lines = cli_json(flushwise_bin, ["sim", "run", *cli_flags(options)])
    cli_result = [l for l in lines if l["kind"] == "result"]
    cli_rows = [l for l in lines if l["kind"] == "interval"]
    assert len(cli_result) == 1
    if cli_result[0]["commit"] != result["commit"]:
        pytest.skip(f"{flushwise_bin} was built from {cli_result[0]['commit']}, the package from {result['commit']}")
    assert list(result) == list(cli_result[0]), "same keys in the same order"
    assert without_wall(result) == without_wall(cli_result[0])
    assert len(intervals) == len(cli_rows)
    assert list(intervals["nopm"]) == [r["nopm"] for r in cli_rows]


def test_run_result_names_the_run():
    r = flushwise.sim.run(SMALL, policy="percona56")
    assert r["kind"] == "result" and r["shell"] == "simulator"
    assert r["policy"] == "percona56"
    assert r["commit"] == flushwise.COMMIT
    assert r["nopm"] > 0 and 0 < r["hit_ratio"] <= 1
    assert isinstance(r["final_parameters"], list) and r["latency"]


def test_config_as_dataclass_dict_or_keywords_is_one_run():
    a = flushwise.sim.run(SimConfig(**SMALL, policy="mysql56"))
    b = flushwise.sim.run(dict(SMALL, policy="mysql56"))
    c = flushwise.sim.run(policy="mysql56", **SMALL)
    assert without_wall(a) == without_wall(b) == without_wall(c)


def test_numbers_mean_bytes_and_seconds():
    a = flushwise.sim.run(dict(SMALL, buffer_pool=4 << 20, warmup=2, duration=4.0))
    b = flushwise.sim.run(SMALL)
    assert a["config_hash"] == b["config_hash"]


def test_same_seed_gives_identical_results_and_another_seed_does_not():
    a = flushwise.sim.run(SMALL, seed=3)
    b = flushwise.sim.run(SMALL, seed=3)
    c = flushwise.sim.run(SMALL, seed=4)
    assert without_wall(a) == without_wall(b)
    assert a["config_hash"] != c["config_hash"]
    assert without_wall(a) != without_wall(c)


def test_compare_returns_one_row_per_policy_in_order():
    policies = ["mysql56", "percona56:io_capacity=400", "self-tuning", "flushwise"]
    df = flushwise.sim.compare(policies=policies, jobs=2, **SMALL)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(policies)
    assert list(df["policy"]) == policies
    for column in ["nopm", "sync_write_pct", "io_per_txn", "hit_ratio", "config_hash", "seed"]:
        assert column in df.columns
    assert any(c.startswith("param_") for c in df.columns)
    # Each row is the run sim.run makes alone.
    alone = flushwise.sim.run(SMALL, policy="self-tuning")
    assert df.loc[2, "nopm"] == alone["nopm"]
    assert df.loc[2, "config_hash"] == alone["config_hash"]


def test_compare_takes_the_cli_policy_list_syntax():
    df = flushwise.sim.compare(policies="db2:cleaners=4,softmax_pct=20,mysql56", **SMALL)
    assert list(df["policy"]) == ["db2:cleaners=4,softmax_pct=20", "mysql56"]


def test_run_intervals_is_a_dataframe_of_interval_rows():
    df = flushwise.sim.run_intervals(SMALL, policy="mysql56")
    assert isinstance(df, pd.DataFrame)
    # 2 s warm-up + 4 s measured at 2 s intervals.
    assert len(df) == 3
    assert list(df["warmup"]) == [True, False, False]
    assert {"time_s", "nopm", "dirty_pct", "free_pages", "config_hash"} <= set(df.columns)


@pytest.mark.parametrize(
    "options, named",
    [
        ({"buffer_pool": "12QB"}, "--buffer-pool 12QB"),
        ({"warehouse": 3}, "warehouse"),
        ({"policy": "nosuch"}, "nosuch"),
        ({"policy": "mysql56:depth=3"}, "depth"),
        ({"connections": 0}, "--connections"),
        ({"device": "floppy"}, "--device"),
        ({"warmup": "soon"}, "--warmup"),
        ({"mix": "write-only"}, "--mix"),
        ({"workload": "trace"}, "--trace"),
        ({"warehouses": "ten"}, "warehouses"),
    ],
)
def test_bad_input_raises_value_error_naming_the_problem(options, named):
    with pytest.raises(ValueError) as e:
        flushwise.sim.run(dict(SMALL, **options))
    assert named in str(e.value)


def test_compare_refuses_policy_and_bad_policies():
    with pytest.raises(ValueError, match="policies"):
        flushwise.sim.compare(policies=["mysql56"], policy="mysql56", **SMALL)
    with pytest.raises(ValueError, match="nosuch"):
        flushwise.sim.compare(policies=["mysql56", "nosuch"], **SMALL)


def test_policies_lists_every_policy_and_its_parameters():
    policies = flushwise.policies()
    names = [p["name"] for p in policies]
    assert {"mysql56", "percona56", "self-tuning", "flushwise"} <= set(names)
    assert [p["name"] for p in policies if p["default"]] == [flushwise.DEFAULT_POLICY]
    mysql = next(p for p in policies if p["name"] == "mysql56")
    keys = {p["key"] for p in mysql["params"]}
    assert "lru_scan_depth" in keys and "io_capacity" in keys
    assert all({"key", "type", "default", "accepted", "doc"} <= set(p) for p in mysql["params"])


def test_defaults_are_the_cli_defaults():
    d = flushwise.sim.defaults()
    assert d["buffer_pool"] == "64MiB" and d["warehouses"] == 10 and d["policy"] == flushwise.DEFAULT_POLICY
