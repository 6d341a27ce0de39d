"""kcformat.py's reader of whole vaults, written from Docs/FORMAT.md alone, agrees with every committed
vector: the live items of each vault that opens, and NotAnItem for each put the item rules refuse."""
from __future__ import annotations

import json

import pytest

from kcformat import NotAnItem, items, vectors

ALL = vectors()
OPENS = [v for v in ALL if v.fields["expect"] == "success"]
NOT_ITEMS = [v for v in ALL if v.fields.get("error", "").startswith("bad-item")]


@pytest.mark.parametrize("vector", OPENS, ids=lambda v: v.name)
def test_items_of_each_vault_that_opens(vector):
    assert items(vector.data, vector.fields["password"].encode()) == [json.loads(line) for line in vector.items]


@pytest.mark.parametrize("vector", NOT_ITEMS, ids=lambda v: v.name)
def test_each_put_that_is_not_an_item_is_refused(vector):
    with pytest.raises(NotAnItem):
        items(vector.data, vector.fields["password"].encode())


def test_the_require_password_vectors_are_among_them():
    names = {v.name for v in OPENS + NOT_ITEMS}
    assert {"item-require-password", "item-require-password-empty", "item-require-password-zero",
            "item-require-password-two", "item-require-password-two-bytes"} <= names
    assert len(OPENS) >= 15 and len(NOT_ITEMS) >= 10


RESOLVED_MALFORMED = [v for v in ALL if v.name.startswith("payload-resolved-versions-")]


@pytest.mark.parametrize("vector", RESOLVED_MALFORMED, ids=lambda v: v.name)
def test_a_resolved_versions_field_that_is_not_whole_record_ids_is_malformed(vector):
    with pytest.raises(AssertionError, match="resolved versions"):
        items(vector.data, vector.fields["password"].encode())


def test_the_resolved_versions_vectors_are_among_them():
    assert "valid-resolved-versions" in {v.name for v in OPENS} and len(RESOLVED_MALFORMED) == 2


KEY_MALFORMED = [v for v in ALL if v.name.startswith(("payload-password-change", "payload-earlier-key", "payload-header-field",
                                                    "payload-key-id"))]


@pytest.mark.parametrize("vector", KEY_MALFORMED, ids=lambda v: v.name)
def test_a_malformed_password_change_or_earlier_key_is_refused(vector):
    with pytest.raises(AssertionError, match="key (record|field)"):
        items(vector.data, vector.fields["password"].encode())


def test_the_key_change_vectors_are_among_them():
    assert {"valid-password-change", "valid-earlier-key"} <= {v.name for v in OPENS} and len(KEY_MALFORMED) == 9


def test_the_this_device_only_vectors_are_among_them():
    names = {v.name for v in OPENS + NOT_ITEMS}
    assert {"item-this-device-only", "item-this-device-only-empty", "item-this-device-only-zero",
            "item-this-device-only-two", "item-this-device-only-two-bytes"} <= names
    marked = next(v for v in OPENS if v.name == "item-this-device-only")
    assert [item.get("thisDeviceOnly") for item in items(marked.data, marked.fields["password"].encode())] == [True, True, None]


def test_the_page_vectors_are_read_by_the_independent_reader():
    """Pages (FORMAT.md, "Pages"): the valid page vectors open here too, and the malformed ones are refused."""
    names = {v.name for v in OPENS}
    assert {"valid-page", "valid-pages-and-records", "valid-pages-two"} <= names
    by_name = {v.name: v for v in ALL}
    for name in ("page-count-mismatch", "page-count-zero", "page-trailing-bytes", "page-batch-field",
                 "page-in-version-1", "page-flag-cleared", "page-tampered"):
        vector = by_name[name]
        with pytest.raises(AssertionError):
            items(vector.data, vector.fields["password"].encode())


def test_the_device_name_vectors_are_among_them():
    from kcformat import device_names
    named = next(v for v in OPENS if v.name == "valid-device-name")
    names = device_names(named.data, named.fields["password"].encode())
    assert sorted(names.values()) == ["desk", "laptop two"], "the newest record of each device names it"
    assert {"payload-device-name-in-version-1", "payload-device-name-with-item-id"} <= {v.name for v in ALL}


def test_the_rotation_proofs_verify_under_each_earlier_key_and_no_other():
    """Docs/FORMAT.md, "Rotation proofs": computed here with hashlib's BLAKE2b alone (crypto_kdf's
    subkey spelled out), independently of libsodium and of kc's writer."""
    from kcformat import (EARLIER_KEY, TAG_EARLIER_KEY, parse_payload, proves_rotation, records, records_offset,
                          rotation_proof, rotation_proofs)
    vector = next(v for v in ALL if v.name == "valid-rotation-proof")
    data, password = vector.data, vector.fields["password"].encode()
    assert data[8] == 3 and data[29] == 2 and records_offset(data) == 140 + 64
    earlier = [p.fields[TAG_EARLIER_KEY] for p in (parse_payload(plain) for _, plain in records(data, password))
               if p.kind == EARLIER_KEY]
    assert len(earlier) == 2
    assert rotation_proofs(data) == [rotation_proof(data[:140], key) for key in earlier]
    assert proves_rotation(data, earlier[1:]) and not proves_rotation(data, [bytes(32)])
    tampered = bytearray(data)
    tampered[40] ^= 1   # another KDF cost: the header the proofs were made over is not this one
    assert not proves_rotation(bytes(tampered), earlier)
