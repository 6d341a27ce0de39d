"""`make bench` works: the benchmark (Tests/bench/bench.py) run once on a vault of 10 items with 2 runs
a row, peers included, against the release build. Its figures mean nothing at this size; what is
checked is that every row has a median and a peak memory (the unlocked rows served by an agent started by
`kc unlock`, whose peak memory is read too), pass and secret-tool ran beside kc, the sync rows (10 + 10
records merged, a round trip, 4 syncs with and without compaction) have their figures, and the table, JSON
and SVG are written."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"
KC_ROWS = ["version", "find", "find-moderate", "add", "list", "update", "delete", "check", "compact", "find-compacted",
           "add-compacted"]
AGENT_ROWS = ["unlock", "unlocked-find", "unlocked-add", "unlocked-list"]


def run_bench(kc: str, cwd: Path, out: str) -> subprocess.CompletedProcess:
    """The benchmark with results in `out`, relative to `cwd` as `make bench` gives it."""
    env = dict(os.environ, BENCH_SIZES="10", BENCH_RUNS="2", BENCH_WARMUP="1", BENCH_SYNC_RECORDS="10", BENCH_SYNC_ROUNDS="4")
    return subprocess.run([sys.executable, str(BENCH), kc, "--out", out], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240)


def release_binary() -> str:
    binary = os.environ.get("KC_RELEASE_BIN")
    if not binary:
        pytest.skip("KC_RELEASE_BIN is not set (make e2e-test sets it to the release build)")
    return binary


def test_bench_tiny_measures_every_row(tmp_path):
    result = run_bench(release_binary(), tmp_path, "results")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "results"
    data = json.loads((out / "latest.json").read_text())
    rows = data["rows"]
    for key in KC_ROWS + AGENT_ROWS + ["pass", "secret-tool"]:
        stats = rows[key]["10"]
        assert stats["median_ms"] > 0 and stats["runs"] >= 2 and stats["max_rss_kib"] > 0, (key, stats)
    assert rows["agent"]["10"]["max_rss_kib"] > 0
    for key in ("export", "import-back"):       # the round trip, one run each
        assert rows[key]["10"]["median_ms"] > 0 and rows[key]["10"]["max_rss_kib"] > 0, (key, rows[key])
    assert rows["export-size"]["10"]["bytes"] > 0
    assert rows["unlocked-find-beyond"]["10"]["median_ms"] == \
        rows["unlocked-find"]["10"]["median_ms"] - rows["version"]["10"]["median_ms"]
    assert rows["keyring-daemon"]["10"]["max_rss_kib"] > 0
    assert rows["find-compacted-beyond-kdf"]["10"]["median_ms"] == \
        rows["find-compacted"]["10"]["median_ms"] - rows["kdf"]["10"]["median_ms"]
    assert data["machine"]["nproc"] >= 1 and data["machine"]["loadavg_end"]
    sync = data["sync"]
    assert sync["merge"]["median_ms"] > 0 and sync["sync"]["median_ms"] > 0, sync
    for mode in ("appending", "compacting"):
        size = sync["repo-size"][mode]
        assert size["commits"] == 6, (mode, size)   # sync init (its push and its device name's round), then 4 rounds
        assert size["pushed_bytes"] > 0 and size["gc_bytes"] > 0 and size["aggressive_bytes"] > 0, (mode, size)
    assert sync["repo-size"]["compacting"]["compact_every"] == 2
    table = (out / "latest.md").read_text()
    assert "| `kc merge-driver`: 10 + 10 new records (median) | " in table
    assert "repository after 4 syncs" in table
    assert "| cold `kc find -w` after `kc compact`, beyond the KDF | " in table
    assert "| `pass show` ÷ cold `kc find -w` (above 1: kc is faster) | " in table
    assert "| `secret-tool lookup` ÷ cold `kc find -w` (above 1: kc is faster) | " in table
    assert "| `pass show` ÷ unlocked `kc find -w` (above 1: kc is faster) | " in table
    assert "| `kc import json` of that export into a new vault (one run) | " in table
    assert "no peer row: pass has no export or import" in table
    assert "n/a" not in table
    assert "<svg" in (out / "latest.svg").read_text()
    assert not (out / "work").exists(), "the vaults, stores and keyrings are removed"


def test_bench_fails_when_a_command_fails(tmp_path):
    """A kc that fails makes the benchmark fail, instead of printing figures of a failure."""
    fake = tmp_path / "kc"
    fake.write_text('#!/bin/sh\ncase "$1" in\n  init) mkdir -p "$XDG_DATA_HOME/kc" && : > "$XDG_DATA_HOME/kc/login.kc";;\n'
                    '  find) exit 44;;\nesac\n')
    fake.chmod(0o755)
    result = run_bench(str(fake), tmp_path, "out")
    assert result.returncode != 0 and "find" in result.stderr and "exit code" in result.stderr, result.stderr
    assert not (tmp_path / "out" / "latest.md").exists()
