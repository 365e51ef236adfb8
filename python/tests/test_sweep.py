"""flushwise.sweep: a small grid on a local Ray gives the Rust lab's table."""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

import flushwise
from flushwise import _native, sweep

#: mysql56 and percona56 at two io_capacity values (3 policies) x 2 pools = 6
#: runs, each a fraction of a second.
GRID = {
    "warehouses": 2,
    "connections": 8,
    "redo": "16MiB",
    "warmup": "2s",
    "duration": "4s",
    "report_interval": "2s",
    "policy": ["mysql56", {"name": "percona56", "io_capacity": [200, 800]}],
    "buffer_pool": ["4MiB", "8MiB"],
}


def rows(text: str):
    return list(csv.DictReader(io.StringIO(text)))


def same_table(a: str, b: str) -> None:
    """Equal header, equal cells but for the wall-clock columns."""
    ra, rb = rows(a), rows(b)
    assert a.splitlines()[0] == b.splitlines()[0], "same columns in the same order"
    assert len(ra) == len(rb)
    for x, y in zip(ra, rb):
        for column in sweep.WALL_CLOCK_COLUMNS:
            x.pop(column, None)
            y.pop(column, None)
        assert x == y


@pytest.fixture(scope="module")
def rust_table(tmp_path_factory, flushwise_bin):
    """The Rust lab's table for GRID: `flushwise sim sweep` if built, else the
    lab's own runner in-process (the same Rust code)."""
    if flushwise_bin is None:
        return _native.sweep_run(json.dumps(GRID), 2)
    path = tmp_path_factory.mktemp("grid") / "grid.json"
    path.write_text(json.dumps(GRID))
    out = subprocess.run(
        [str(flushwise_bin), "sim", "sweep", "--grid", str(path), "--output", "csv", "--jobs", "2"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    built_from = {r["commit"] for r in rows(out.stdout)}
    if built_from != {flushwise.COMMIT}:
        # A binary from another tree state: the lab's runner in-process.
        return _native.sweep_run(json.dumps(GRID), 2)
    return out.stdout


def test_expand_is_the_product_first_axis_slowest():
    runs = sweep.expand(GRID)
    assert [(r["policy"], r["buffer_pool"]) for r in runs] == [
        ("mysql56", "4MiB"),
        ("mysql56", "8MiB"),
        ("percona56:io_capacity=200", "4MiB"),
        ("percona56:io_capacity=200", "8MiB"),
        ("percona56:io_capacity=800", "4MiB"),
        ("percona56:io_capacity=800", "8MiB"),
    ]


def test_a_bad_grid_raises_value_error_naming_the_problem():
    with pytest.raises(ValueError, match="warehouse"):
        sweep.expand({"warehouse": [1, 2]})
    with pytest.raises(ValueError, match="--buffer-pool 12QB"):
        sweep.expand(dict(GRID, buffer_pool=["4MiB", "12QB"]))
    with pytest.raises(ValueError, match="nosuch"):
        sweep.expand(dict(GRID, policy=["nosuch"]))


def test_local_sweep_table_is_the_rust_labs(rust_table):
    table = sweep.run_csv(GRID, local=True, jobs=2, quiet=True)
    same_table(table, rust_table)
    assert len(rows(table)) == 6
    header = table.splitlines()[0].split(",")
    assert header[:3] == ["run", "shell", "policy"] and "nopm_cov" in header


def test_ray_sweep_table_is_the_rust_labs(rust_table):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        table = sweep.run_csv(GRID, quiet=True)
        df = sweep.run(GRID, quiet=True)
    finally:
        ray.shutdown()
    same_table(table, rust_table)
    assert list(df["run"]) == list(range(6))
    assert list(df["policy"]) == [r["policy"] for r in sweep.expand(GRID)]
    # The row of run 3 is the run sim.run makes alone.
    alone = flushwise.sim.run(sweep.expand(GRID)[3])
    assert df.loc[3, "nopm"] == alone["nopm"] and df.loc[3, "config_hash"] == alone["config_hash"]


def test_the_console_script_takes_a_yaml_grid_and_flags(tmp_path, rust_table):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "warehouses: 2\nconnections: 8\nredo: 16MiB\nwarmup: 2s\nduration: 4s\nreport_interval: 2s\n"
        "policy: [mysql56, {name: percona56, io_capacity: [200, 800]}]\n"
    )
    out = tmp_path / "table.csv"
    code = sweep.main(["--grid", str(grid), "--buffer-pool", "4MiB,8MiB", "--local", "--quiet", "--out", str(out)])
    assert code == 0
    same_table(out.read_text(), rust_table)


def test_the_console_script_reports_a_bad_grid(capsys):
    assert sweep.main(["--warehouses", "2", "--buffer-pool", "12QB", "--local"]) == 2
    assert "--buffer-pool 12QB" in capsys.readouterr().err
