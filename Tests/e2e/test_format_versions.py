"""Format versions (Docs/FORMAT.md, "Format versions") through the kc binary: `kc init` writes version 2,
an append keeps a version-1 file at version 1, and `kc compact` converts it to version 2 with every
item kept; the independent reader reads both and refuses version 4."""
from __future__ import annotations

import pytest

from kcformat import header_version, items, read_vector, VECTORS
from kcharness import KC

PASSWORD = b"correct horse battery staple"


def install_vector(kc: KC, name: str) -> bytes:
    vector = read_vector(VECTORS / f"{name}.txt")
    kc.write_secret_file(kc.password_file, vector.fields["password"] + "\n")
    kc.vault_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    kc.vault_path.write_bytes(vector.data)
    kc.vault_path.chmod(0o600)
    return vector.data


def test_init_writes_version_2(kc):
    kc.init()
    assert header_version(kc.vault_path.read_bytes()) == 2
    kc.add_generic("example.com", "me")
    assert header_version(kc.vault_path.read_bytes()) == 2


def test_append_keeps_version_1_and_compact_converts(kc):
    data = install_vector(kc, "valid-items")
    assert header_version(data) == 1
    before = items(data, PASSWORD)
    kc.add_generic("new.example.com", "me", "fresh")
    appended = kc.vault_path.read_bytes()
    assert header_version(appended) == 1
    assert appended.startswith(data)
    kc.ok(["compact"])
    compacted = kc.vault_path.read_bytes()
    assert header_version(compacted) == 2
    assert compacted[12:28] == data[12:28]   # the vault id is kept
    after = items(compacted, PASSWORD)
    assert after[:len(before)] == before
    assert [i.get("service") for i in after[len(before):]] == ["new.example.com"]
    assert kc.ok(["find", "generic", "-s", "new.example.com", "-w"]).stdout.strip() == "fresh"


def test_passwd_writes_version_2(kc):
    install_vector(kc, "valid-items")
    new = kc.write_secret_file(kc.home / "new-password", "another password: ember tundra velvet\n")
    kc.ok(["passwd", "--new-password-file", str(new)])
    assert header_version(kc.vault_path.read_bytes()) == 2


def test_reader_reads_versions_2_and_3_and_refuses_version_4():
    v2 = read_vector(VECTORS / "valid-version-2.txt").data
    v1 = read_vector(VECTORS / "valid-items.txt").data
    assert header_version(v2) == 2
    assert items(v2, PASSWORD) == items(v1, PASSWORD)
    v3 = read_vector(VECTORS / "valid-rotation-proof.txt").data
    assert header_version(v3) == 3 and len(items(v3, PASSWORD)) == 1
    with pytest.raises(AssertionError, match="unsupported version 4"):
        items(read_vector(VECTORS / "header-unsupported-version.txt").data, PASSWORD)
