"""Every test vector of Docs/vectors through the kc binary: `kc find`, `kc list` and `kc check` agree
with the vector's expected outcome (items, torn tail, error), and never crash."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from kcharness import KC

VECTORS = Path(__file__).resolve().parents[2] / "Docs" / "vectors"
EXIT_DECODE, EXIT_AUTH_FAILED, EXIT_NOT_FOUND = 93, 51, 44


def load(name: str) -> tuple[dict[str, list[str]], bytes]:
    """The header lines (key -> values) and the vault bytes of one vector file."""
    head, _, hex_lines = (VECTORS / f"{name}.txt").read_text(encoding="utf-8").partition("\n\n")
    headers: dict[str, list[str]] = {}
    for line in head.splitlines():
        key, _, value = line.partition(": ")
        headers.setdefault(key, []).append(value)
    return headers, bytes.fromhex("".join(hex_lines.split()))


NAMES = [line.split("\t")[0] for line in (VECTORS / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]]


def vector_kc(kc: KC, name: str) -> tuple[KC, dict[str, list[str]]]:
    """Installs the vector's vault as the default vault, with its password as the master password."""
    headers, data = load(name)
    kc.write_secret_file(kc.password_file, headers["password"][0] + "\n")
    kc.vault_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    kc.vault_path.write_bytes(data)
    kc.vault_path.chmod(0o600)
    return kc, headers


def expected_items(headers) -> list[dict]:
    """The vector's items as `kc find --json -w` shows them (dates aside: kc prints them to the second)."""
    out = []
    for line in headers.get("item", []):
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
    assert sorted(NAMES) == sorted(p.stem for p in VECTORS.glob("*.txt"))
    assert len(NAMES) >= 80


@pytest.mark.parametrize("name", NAMES)
def test_find_list_and_check_agree_with_the_vector(kc, name):
    kc, headers = vector_kc(kc, name)
    expect = headers["expect"][0]
    find = kc.run(["find", "--all", "--json", "-w"])
    listing = kc.run(["list"])
    check = kc.run(["check"])
    for result in (find, listing, check):
        assert 0 <= result.returncode < 128, f"kc crashed: {result}"   # a signal (SIGILL: a Swift trap) is negative
    if expect in ("success", "truncated"):
        items = expected_items(headers)
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
        assert f"records: {headers['records'][0]}\n" in check.stdout, check
    elif expect == "wrong password":
        for result in (find, listing, check):
            assert result.returncode == EXIT_AUTH_FAILED and result.error_name == "errSecAuthFailed", result
    else:
        error = headers["error"][0]
        for result in (find, listing, check):
            assert result.returncode == EXIT_DECODE and result.error_name == "errSecDecode", result
        if expect == "record failure":
            offset = error.split("offset=")[1].split()[0]
            assert f"at offset {offset}" in find.stderr, find
            prefix = "not an item: " if error.startswith("bad-item") else "damaged: "
            assert any(line.startswith(prefix) and f"at offset {offset}" in line
                       for line in check.stdout.splitlines()), check
            assert "status: NOT whole\n" in check.stdout, check
