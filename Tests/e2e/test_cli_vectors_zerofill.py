"""The zero-fill vectors of Docs/vectors through the binary, one step further than test_cli_vectors:
each zero-filled tail FORMAT.md decides is removed by plain `kc repair`, after which the vault is
whole and takes a write; each case it leaves as damage on purpose is refused by plain `kc repair`
(the file untouched) and recovered by `kc repair --salvage`, which names the record it loses."""
from __future__ import annotations

import json

import pytest

from kcformat import vectors
from kcharness import EXIT_DECODE
from test_cli_vectors import expected_items, install

ZERO_FILL = [v for v in vectors() if "zero-fill" in v.name]
TORN = [v for v in ZERO_FILL if v.fields["expect"] == "truncated"]
DAMAGED = [v for v in ZERO_FILL if v.fields["expect"] == "record failure"]


def shown_items(kc) -> list[dict]:
    r = kc.run(["find", "--all", "--json", "-w"])
    assert r.returncode == 0, r
    return [{k: v for k, v in item.items() if k not in ("created", "modified")} for item in json.loads(r.stdout)]


def test_every_decided_case_has_a_vector():
    assert {v.name for v in TORN} >= {"truncated-zero-filled-record", "truncated-zero-filled-sector",
                                       "truncated-zero-filled-frame", "truncated-zero-filled-frame-end",
                                       "truncated-zero-filled-batch", "truncated-zero-filled-batch-gap"}
    assert {v.name for v in DAMAGED} == {"record-zero-filled-sector-then-record", "record-zero-fill-under-16-bytes"}


@pytest.mark.parametrize("vector", TORN, ids=lambda v: v.name)
def test_plain_repair_removes_a_zero_filled_tail(kc, vector):
    install(kc, vector)
    torn = dict(part.split("=") for part in vector.fields["warning"].split()[1:])
    offset, length = int(torn["offset"]), int(torn["length"])
    r = kc.run(["repair", "--yes"])
    assert r.returncode == 0 and f"removed {length} bytes of torn tail" in r.stderr, r
    assert kc.vault_path.stat().st_size == offset == len(vector.data) - length
    check = kc.run(["check"])
    assert check.returncode == 0 and "status: whole\n" in check.stdout, check
    assert f"records: {vector.fields['records']}\n" in check.stdout, check
    assert shown_items(kc) == expected_items(vector)
    kc.add_generic("after.example.com", "acct", "after-secret")
    assert "status: whole\n" in kc.run(["check"]).stdout


@pytest.mark.parametrize("vector", DAMAGED, ids=lambda v: v.name)
def test_damage_left_on_purpose_needs_salvage(kc, vector):
    install(kc, vector)
    offset = vector.fields["error"].split("offset=")[1]
    r = kc.run(["repair", "--yes"])
    assert r.returncode == EXIT_DECODE and f"at offset {offset} failed authentication" in r.stderr, r
    assert kc.vault_path.read_bytes() == vector.data, "plain repair changed a damaged vault"
    r = kc.run(["repair", "--salvage", "--yes"])
    assert r.returncode == 0 and "kc: salvaged " in r.stderr, r
    assert f"damaged: record 6 at offset {offset} failed authentication" in r.stderr, r
    assert "lost: record 6 cannot be read" in r.stderr, r
    check = kc.run(["check"])
    assert check.returncode == 0 and "status: whole\n" in check.stdout, check
    kc.add_generic("after.example.com", "acct", "after-secret")
    assert "status: whole\n" in kc.run(["check"]).stdout
