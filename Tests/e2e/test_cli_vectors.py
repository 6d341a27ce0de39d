"""Every test vector of Docs/vectors through the kc binary: `kc find`, `kc list` and `kc check` agree
with the vector's expected outcome (items, torn tail, error), and never crash."""
from __future__ import annotations

import base64
import json

import pytest

from kcformat import VECTORS, Vector, records, vectors
from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE, EXIT_NOT_FOUND, KC

ALL = vectors()


def install(kc: KC, vector: Vector) -> KC:
    """Installs the vector's vault as the default vault, with its password as the master password."""
    kc.write_secret_file(kc.password_file, vector.fields["password"] + "\n")
    kc.vault_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    kc.vault_path.write_bytes(vector.data)
    kc.vault_path.chmod(0o600)
    return kc


def expected_items(vector: Vector) -> list[dict]:
    """The vector's items as `kc find --json -w` shows them (dates aside: kc prints them to the second)."""
    out = []
    for line in vector.items:
        item = json.loads(line)
        shown = {key: value for key, value in item.items() if key not in ("created", "modified", "secret", "secretHex")}
        if "port" in shown:
            shown["port"] = int(shown["port"])
        if "secret" in item:
            shown["password"] = item["secret"]
        else:
            shown["passwordBase64"] = base64.b64encode(bytes.fromhex(item["secretHex"])).decode()
        out.append(shown)
    return out


def test_manifest_lists_every_vector_file():
    manifest = [line.split("\t")[0] for line in (VECTORS / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    assert sorted(manifest) == sorted(v.name for v in ALL)
    assert len(ALL) >= 80


@pytest.mark.parametrize("vector", ALL, ids=lambda v: v.name)
def test_find_list_and_check_agree_with_the_vector(kc, vector):
    install(kc, vector)
    expect = vector.fields["expect"]
    find = kc.run(["find", "--all", "--json", "-w"])
    listing = kc.run(["list"])
    check = kc.run(["check"])
    for result in (find, listing, check):
        assert 0 <= result.returncode < 128, f"kc crashed: {result}"   # a signal (SIGILL: a Swift trap) is negative
    if expect in ("success", "truncated"):
        items = expected_items(vector)
        if items:
            assert find.returncode == 0, find
            shown = [{k: v for k, v in item.items() if k not in ("created", "modified")} for item in json.loads(find.stdout)]
            assert shown == items
        else:
            assert find.returncode == EXIT_NOT_FOUND, find
        assert listing.returncode == 0, listing
        assert len(listing.stdout.splitlines()) == (len(items) + 1 if items else 0), listing   # a header line, one per item
        # A torn tail is not damage: check reports it and exits 0.
        assert check.returncode == 0, check
        assert ("torn tail: " in check.stdout) == (expect == "truncated"), check
        assert f"status: {'whole' if expect == 'success' else 'intact, ends in a torn tail'}\n" in check.stdout, check
        assert f"records: {vector.fields['records']}\n" in check.stdout, check
    elif expect == "wrong password":
        for result in (find, listing, check):
            assert result.returncode == EXIT_AUTH_FAILED and result.error_name == "errSecAuthFailed", result
    else:
        error = vector.fields["error"]
        for result in (find, listing, check):
            assert result.returncode == EXIT_DECODE and result.error_name == "errSecDecode", result
        if expect == "record failure":
            offset = error.split("offset=")[1].split()[0]
            assert f"at offset {offset}" in find.stderr, find
            prefix = "not an item: " if error.startswith("bad-item") else "damaged: "
            assert any(line.startswith(prefix) and f"at offset {offset}" in line
                       for line in check.stdout.splitlines()), check
            assert "status: NOT whole\n" in check.stdout, check


def one_device_vectors() -> list[Vector]:
    """The readable vectors whose items' records one device wrote (read up to a torn tail)."""
    out = []
    for vector in ALL:
        if vector.fields["expect"] not in ("success", "truncated"):
            continue
        data = vector.data
        torn = vector.fields.get("warning", "")
        if torn.startswith("torn-tail offset="):
            data = data[:int(torn.split("offset=")[1].split()[0])]
        payloads = [payload for _, payload in records(data, vector.fields["password"].encode())]
        if len({payload[18:34] for payload in payloads if payload[1] in (1, 2)}) == 1:
            out.append(vector)
    return out


@pytest.mark.parametrize("vector", one_device_vectors(), ids=lambda v: v.name)
def test_conflicts_lists_nothing_in_a_vault_one_device_wrote(kc, vector):
    """One device's records supersede each other in merge order (SYNC.md rule 5; format review D1:
    a record of a higher counter stamped earlier made kc list a conflict, or fail on a put replay
    never decodes)."""
    install(kc, vector)
    conflicts = kc.run(["conflicts"])
    assert conflicts.returncode == 0 and conflicts.stdout == "", conflicts
