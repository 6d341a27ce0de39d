"""`kc repair --salvage` on a vault whose only problem is records that authenticate but are not
items: a salvage would keep them as they are, so it fails as `kc check` does (errSecDecode, the
records named) instead of calling the vault whole, and writes nothing."""
from __future__ import annotations

import pytest

from kcformat import sha256, vectors
from kcharness import EXIT_DECODE, KC
from test_cli_vectors import install

NOT_ITEMS = [v for v in vectors() if v.fields.get("error", "").startswith("bad-item")]


def test_there_are_vectors_with_records_that_are_not_items():
    assert len(NOT_ITEMS) >= 3, [v.name for v in NOT_ITEMS]


@pytest.mark.parametrize("vector", NOT_ITEMS, ids=lambda v: v.name)
def test_salvage_fails_as_check_does(kc: KC, vector):
    install(kc, vector)
    before = sha256(kc.vault_path)
    check = kc.run(["check"])
    salvage = kc.run(["repair", "--salvage", "--yes"])
    for result in (check, salvage):
        assert result.returncode == EXIT_DECODE and result.error_name == "errSecDecode", result
    assert salvage.stderr.splitlines()[-2:] == check.stderr.splitlines()[-2:], (salvage, check)
    offset = vector.fields["error"].split("offset=")[1].split()[0]
    assert f"not an item: record " in salvage.stderr and f"at offset {offset}" in salvage.stderr, salvage
    assert "nothing to salvage" not in salvage.stderr, salvage
    assert sha256(kc.vault_path) == before
    assert sorted(p.name for p in kc.vault_path.parent.iterdir()) == [kc.vault_path.name]
