"""kc's vault format, as far as the end-to-end tests need it (Docs/FORMAT.md): CRC-32C, the header's
KDF fields and checksum, record frames, the test vectors in Docs/vectors, and a reader of whole
intact vaults (records decrypted with libsodium through ctypes, payloads and items decoded here).

Written from the document, not from Sources/KCFormat; test_format_reader.py checks the reader
against the committed vectors, so it cannot drift from what kc writes.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "Docs" / "vectors"

HEADER_LENGTH = 140
HEADER_CHECKSUM_OFFSET = 136
FRAME_LENGTH = 16
READABLE_VERSIONS = (1, 2, 3)
PROOF_VERSION = 3            # a header followed by rotation proofs (their count in byte 29)
PROOF_LENGTH = 32
PAGE_FLAG = 1 << 31          # bit 31 of a frame's length field: a page (format version 2 only)
PAGE_MAX_BODY = 64 << 10


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), reflected, as FORMAT.md specifies for the header and frames."""
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C catalogue check value


def header_checksum_ok(data: bytes) -> bool:
    """The header's stored CRC-32C (u32 LE at 136) matches its first 136 bytes."""
    stored = struct.unpack_from("<I", data, HEADER_CHECKSUM_OFFSET)[0]
    return stored == crc32c(data[:HEADER_CHECKSUM_OFFSET])


@dataclass
class Frame:
    offset: int      # start of the frame
    end: int         # end of the body
    sequence: int    # for a page, its first record's
    is_page: bool = False

    @property
    def body(self) -> tuple[int, int]:
        return self.offset + FRAME_LENGTH, self.end


def frames(data: bytes) -> list[Frame]:
    """The complete records of an intact vault, in order (stops at the first incomplete one)."""
    out = []
    offset = records_offset(data)
    assert offset <= len(data), "the file ends inside its rotation proofs"
    while offset + FRAME_LENGTH <= len(data):
        field, sequence, crc = struct.unpack_from("<IQI", data, offset)
        assert crc == crc32c(data[offset:offset + 12]), f"bad frame checksum at {offset}"
        is_page, length = bool(field & PAGE_FLAG), field & ~PAGE_FLAG
        assert not is_page or (header_version(data) >= 2 and length <= PAGE_MAX_BODY), f"impossible length at {offset}"
        end = offset + FRAME_LENGTH + length
        if end > len(data):
            break
        out.append(Frame(offset, end, sequence, is_page))
        offset = end
    return out


def frame_bytes(length: int, sequence: int) -> bytes:
    head = struct.pack("<IQ", length, sequence)
    return head + struct.pack("<I", crc32c(head))


def renumber(record: bytes, sequence: int) -> bytes:
    """A record with its frame's sequence number changed and the frame checksum recomputed."""
    length = struct.unpack_from("<I", record, 0)[0]
    return frame_bytes(length, sequence) + record[FRAME_LENGTH:]


def patch_header(data: bytes, *, ops: int | None = None, memory: int | None = None) -> bytes:
    """Sets the header's Argon2id opslimit (u64 LE at 32) and memlimit (u64 LE at 40) and
    recomputes the header CRC-32C (over 0..<136, stored LE at 136)."""
    b = bytearray(data)
    if ops is not None:
        struct.pack_into("<Q", b, 32, ops)
    if memory is not None:
        struct.pack_into("<Q", b, 40, memory)
    struct.pack_into("<I", b, HEADER_CHECKSUM_OFFSET, crc32c(bytes(b[0:HEADER_CHECKSUM_OFFSET])))
    return bytes(b)


def header_version(data: bytes) -> int:
    """The header's format version (u16 LE at 8)."""
    return struct.unpack_from("<H", data, 8)[0]


def proof_count(data: bytes) -> int:
    """How many rotation proofs follow the header: byte 29 of a version-3 header, else none."""
    return data[29] if header_version(data) >= PROOF_VERSION else 0


def records_offset(data: bytes) -> int:
    """Where the records start: after the header and its rotation proofs."""
    return HEADER_LENGTH + PROOF_LENGTH * proof_count(data)


def rotation_proofs(data: bytes) -> list[bytes]:
    """The rotation proofs after the header, in clear (32 bytes each)."""
    return [data[HEADER_LENGTH + i * PROOF_LENGTH:HEADER_LENGTH + (i + 1) * PROOF_LENGTH] for i in range(proof_count(data))]


def rotation_proof(header: bytes, earlier_key: bytes) -> bytes:
    """A rotation proof: BLAKE2b-256 of the 140 header bytes keyed with subkey 1 of `earlier_key` by
    crypto_kdf (context "kcrotate"), i.e. BLAKE2b-256 of nothing keyed with the key, salt the subkey id
    (u64 LE) padded to 16 bytes, personalization "kcrotate" padded to 16 bytes."""
    subkey = hashlib.blake2b(b"", digest_size=32, key=earlier_key, salt=struct.pack("<Q", 1) + bytes(8),
                             person=b"kcrotate" + bytes(8)).digest()
    return hashlib.blake2b(header[:HEADER_LENGTH], digest_size=32, key=subkey).digest()


def proves_rotation(data: bytes, keys: list[bytes]) -> bool:
    """True when one of the file's rotation proofs was made with one of `keys` over its header."""
    expected = {rotation_proof(data[:HEADER_LENGTH], key) for key in keys}
    return any(proof in expected for proof in rotation_proofs(data))


def header_kdf(data: bytes) -> tuple[int, int]:
    """The header's Argon2id (opslimit, memlimit in bytes)."""
    return struct.unpack_from("<QQ", data, 32)


def vault_id(data: bytes) -> str:
    return data[12:28].hex()


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass
class Vector:
    """One test vector of Docs/vectors: its header lines (`expect`, `password`, `kdf`, `records`, ...,
    `item` lines as a list) and the vault file's bytes."""
    name: str
    fields: dict
    items: list
    data: bytes


def read_vector(path: Path) -> Vector:
    head, _, body = path.read_text().partition("\n\n")
    fields, items = {}, []
    for line in head.splitlines():
        key, _, value = line.partition(": ")
        if key == "item":
            items.append(value)
        else:
            fields[key] = value
    return Vector(path.stem, fields, items, bytes.fromhex("".join(body.split())))


def vectors() -> list[Vector]:
    return [read_vector(p) for p in sorted(VECTORS.glob("*.txt"))]


# --- Reading a whole vault, independently of kc: libsodium's Argon2id and XChaCha20-Poly1305 through
# ctypes (the primitives FORMAT.md names), and the header, record, payload and item rules in Python.

class NotAnItem(Exception):
    """A put that breaks the item rules (FORMAT.md, "Item encoding")."""


def _sodium():
    lib = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
    assert lib.sodium_init() >= 0
    return lib


_SODIUM = None
_ARGON2ID13 = 2
_STRING_TAGS = {2: "service", 3: "account", 4: "label", 5: "description", 6: "comment", 7: "generic",
                8: "server", 9: "protocol", 11: "path", 12: "securityDomain", 13: "authenticationType"}
_CLASS_TAGS = {"generic": (2, 3, 4, 5, 6, 7), "internet": (3, 4, 5, 6, 8, 9, 11, 12, 13)}
PUT, DELETE, COMPACTION = 1, 2, 3
PASSWORD_CHANGE, EARLIER_KEY = 4, 5      # version 2 only: no item's records, they change no item
DEVICE_NAME, TAG_DEVICE_NAME = 6, 21     # version 2 only: a device's name (UTF-8), the newest per device names it
TAG_HEADER, TAG_EARLIER_KEY = 65, 66     # the header a password change wrote (140 bytes), an earlier key (32)
TAG_KEY_ID = 67                          # a password change: the id of the key its header wraps (16 bytes, key_id)
TAG_REQUIRE_PASSWORD = 18
TAG_THIS_DEVICE_ONLY = 19
TAG_RESOLVED_VERSIONS = 20   # record ids of other versions an edit supersedes: no effect on items


def _lib():
    global _SODIUM
    if _SODIUM is None:
        _SODIUM = _sodium()
    return _SODIUM


def derive_key(password: bytes, salt: bytes, ops: int, memory: int) -> bytes:
    """Argon2id (libsodium crypto_pwhash, ALG_ARGON2ID13), 32 bytes."""
    out = ctypes.create_string_buffer(32)
    rc = _lib().crypto_pwhash(out, ctypes.c_ulonglong(32), password, ctypes.c_ulonglong(len(password)), salt,
                              ctypes.c_ulonglong(ops), ctypes.c_size_t(memory), ctypes.c_int(_ARGON2ID13))
    assert rc == 0, "Argon2id failed"
    return out.raw


def aead_open(sealed: bytes, key: bytes, nonce: bytes, ad: bytes) -> bytes | None:
    """XChaCha20-Poly1305 (IETF) open; None when it does not authenticate."""
    out = ctypes.create_string_buffer(max(len(sealed) - 16, 1))
    out_len = ctypes.c_ulonglong(0)
    rc = _lib().crypto_aead_xchacha20poly1305_ietf_decrypt(out, ctypes.byref(out_len), None, sealed,
                                                           ctypes.c_ulonglong(len(sealed)), ad,
                                                           ctypes.c_ulonglong(len(ad)), nonce, key)
    return out.raw[:out_len.value] if rc == 0 else None


@dataclass
class Payload:
    kind: int
    item_id: bytes
    fields: dict          # tag -> value (the frontier entry, 64, is left out)
    offsets: dict         # tag -> offset of the value in the payload


def parse_payload(plain: bytes) -> Payload:
    assert len(plain) >= 74 and plain[0] == 1, "malformed payload"
    fields, offsets, pos = {}, {}, 74
    while pos < len(plain):
        tag, length = plain[pos], struct.unpack_from("<I", plain, pos + 1)[0]
        assert pos + 5 + length <= len(plain), "field past the end"
        assert tag != TAG_RESOLVED_VERSIONS or (length > 0 and length % 24 == 0), "resolved versions not whole record ids"
        assert tag != TAG_HEADER or length == 140, "key field length: a header field is 140 bytes"
        assert tag != TAG_EARLIER_KEY or length == 32, "key field length: an earlier key is 32 bytes"
        assert tag != TAG_KEY_ID or length == 16, "key field length: a key id is 16 bytes"
        if tag != 64:
            assert tag not in fields, "repeated field"
            fields[tag], offsets[tag] = plain[pos + 5:pos + 5 + length], pos + 5
        pos += 5 + length
    return Payload(plain[1], plain[2:18], fields, offsets)


def page_entries(plain: bytes) -> list[bytes]:
    """The payloads of a decrypted page: u32 count (at least 1), then count times u32 length (at least 74)
    and the payload, filling the page exactly (FORMAT.md, "Pages")."""
    count, pos, out = struct.unpack_from("<I", plain, 0)[0], 4, []
    assert count >= 1, "malformed page: count 0"
    for _ in range(count):
        assert pos + 4 <= len(plain), "malformed page: entry header past the end"
        length = struct.unpack_from("<I", plain, pos)[0]
        assert length >= 74 and pos + 4 + length <= len(plain), "malformed page: entry length"
        out.append(plain[pos + 4:pos + 4 + length])
        pos += 4 + length
    assert pos == len(plain), "malformed page: bytes after the last entry"
    return out


def key_id(key: bytes) -> bytes:
    """The id of a vault key (field 67): BLAKE2b-128 of the key, unkeyed, personalization "kc key id"."""
    return hashlib.blake2b(key, digest_size=16, person=b"kc key id").digest()


def vault_key(data: bytes, password: bytes) -> bytes:
    """The vault key the header wraps under `password`."""
    ops, memory = header_kdf(data)
    key = aead_open(data[88:136], derive_key(password, data[48:64], ops, memory), data[64:88], data[:88])
    assert key is not None, "wrong password"
    return key


def records(data: bytes, password: bytes) -> list[tuple[Frame, bytes]]:
    """Every complete record of an intact vault, authenticated and decrypted: (frame, payload); the
    records of a page each with the page's frame."""
    assert header_version(data) in READABLE_VERSIONS, f"unsupported version {header_version(data)}"
    key = vault_key(data, password)
    out, previous = [], bytes(16)
    for frame in frames(data):
        body = data[frame.offset + FRAME_LENGTH:frame.end]
        domain = b"kc page v1" if frame.is_page else b"kc record v1"
        ad = domain + data[12:28] + data[frame.offset:frame.offset + FRAME_LENGTH] + previous
        plain = aead_open(body[24:], key, body[:24], ad)
        assert plain is not None, f"record at {frame.offset} does not authenticate"
        if frame.is_page:
            for payload in page_entries(plain):
                assert 17 not in parse_payload(payload).fields, "a record of a page carries a batch field"
                out.append((frame, payload))
        else:
            out.append((frame, plain))
        previous = body[-16:]
    return out


def item(payload: Payload) -> dict:
    """A put's item as the vectors' `item:` objects hold it; NotAnItem when it breaks the item rules."""
    f = payload.fields
    if f.get(1) not in (b"\x01", b"\x02"):
        raise NotAnItem("class")
    item_class = "generic" if f[1] == b"\x01" else "internet"
    out = {"id": payload.item_id.hex(), "class": item_class}
    for tag in _CLASS_TAGS[item_class]:
        if tag in f:
            try:
                out[_STRING_TAGS[tag]] = f[tag].decode("utf-8")
            except UnicodeDecodeError:
                raise NotAnItem(f"field {tag} is not UTF-8")
    if item_class == "internet" and 10 in f:
        if len(f[10]) > 8 or int.from_bytes(f[10], "little") > 65535:
            raise NotAnItem("port")
        out["port"] = str(int.from_bytes(f[10], "little"))
    for tag, name in ((14, "created"), (15, "modified")):
        if tag in f and len(f[tag]) != 8:
            raise NotAnItem(name)
    out["created"] = struct.unpack("<q", f[14])[0] if 14 in f else 0
    out["modified"] = struct.unpack("<q", f[15])[0] if 15 in f else out["created"]
    for tag, name in ((TAG_REQUIRE_PASSWORD, "requirePassword"), (TAG_THIS_DEVICE_ONLY, "thisDeviceOnly")):
        if tag in f:
            if f[tag] != b"\x01":
                raise NotAnItem(name)
            out[name] = True
    secret = f.get(16, b"")
    try:
        out["secret"] = secret.decode("utf-8")
    except UnicodeDecodeError:
        out["secretHex"] = secret.hex()
    return out


def merge_order(plain: bytes) -> tuple[int, bytes, int]:
    """A record's place in the merge order: timestamp, then device id (bytewise), then counter."""
    return struct.unpack_from("<Q", plain, 42)[0], plain[18:34], struct.unpack_from("<Q", plain, 34)[0]


def items(data: bytes, password: bytes) -> list[dict]:
    """The live items of an intact vault (no torn tail), in creation order, by the replay rules: each
    item's state is its last record in the merge order, wherever it lies in the file."""
    state = {}          # item id -> (merge order of its current record, the item or None when deleted)
    order = []          # item ids in the order they first appear in a put
    version = header_version(data)
    for _, plain in records(data, password):
        payload = parse_payload(plain)
        if payload.kind in (PASSWORD_CHANGE, EARLIER_KEY):
            assert version >= 2, f"key record: kind {payload.kind} is unknown in a version-1 file"
            assert payload.item_id == bytes(16), "key record: kinds 3-5 have no item id"
            required = (TAG_HEADER, TAG_KEY_ID) if payload.kind == PASSWORD_CHANGE else (TAG_EARLIER_KEY,)
            assert all(tag in payload.fields for tag in required), "key record: its field is missing"
        if payload.kind == DEVICE_NAME:
            assert version >= 2, "device name: kind 6 is unknown in a version-1 file"
            assert payload.item_id == bytes(16), "device name: kind 6 has no item id"
        if payload.kind not in (PUT, DELETE):
            continue
        key, current = merge_order(plain), state.get(payload.item_id)
        if payload.kind == PUT:
            if current is not None and current[1] is None and key < current[0]:
                continue                        # before a tombstone read earlier: ignored, not decoded
            decoded = item(payload)             # every other put must decode, even a superseded one
            if payload.item_id not in order:
                order.append(payload.item_id)
            if current is None or current[0] < key:
                state[payload.item_id] = (key, decoded)
        elif current is None or current[0] < key:
            state[payload.item_id] = (key, None)
    # Replay rule 5: of live items sharing a primary key, the one whose current record is last holds it.
    holders = {}
    for item_id in order:
        place, current = state[item_id]
        if current is not None:
            key = primary_key(current)
            if key not in holders or state[holders[key]][0] < place:
                holders[key] = item_id
    return [state[i][1] for i in order if state[i][1] is not None and holders[primary_key(state[i][1])] == i]


_PRIMARY_KEY = {"generic": ("service", "account"),
                "internet": ("server", "protocol", "port", "path", "securityDomain", "authenticationType", "account")}


def primary_key(item: dict) -> tuple:
    """An item's class and primary-key values as Unicode strings compared up to canonical equivalence (NFC);
    an absent value is "", an absent authentication type "default"."""
    absent = {"authenticationType": "default"}
    return (item["class"],) + tuple(unicodedata.normalize("NFC", item.get(name, absent.get(name, "")))
                                    for name in _PRIMARY_KEY[item["class"]])


def device_names(data: bytes, password: bytes) -> dict:
    """Device id (hex) -> name: each device's newest device-name record in the merge order; a record
    whose name field is missing, empty, longer than 64 bytes or not UTF-8 names nothing."""
    newest = {}
    for _, plain in records(data, password):
        payload = parse_payload(plain)
        value = payload.fields.get(TAG_DEVICE_NAME)
        if payload.kind != DEVICE_NAME or value is None or not 1 <= len(value) <= 64:
            continue
        try:
            name = value.decode("utf-8")
        except UnicodeDecodeError:
            continue
        device, key = plain[18:34].hex(), merge_order(plain)
        if device not in newest or newest[device][0] < key:
            newest[device] = (key, name)
    return {device: name for device, (_, name) in newest.items()}


# -- the rollback anchor file (Docs/FORMAT.md, "Anchor file") ------------------------------------
ANCHOR_MAGIC = b"KCANCHOR"
ANCHOR_BLOCK = 4096


def anchor_slot(region: bytes) -> tuple[int, dict[str, int]] | None:
    """(generation, {device hex: counter}) of one slot, or None when it fails a check."""
    if not region.startswith(ANCHOR_MAGIC) or len(region) < 24:
        return None
    generation, count = struct.unpack_from("<QI", region, 8)
    end = 20 + 24 * count
    if end + 4 > len(region):
        return None
    entries = [(region[20 + 24 * i:36 + 24 * i], struct.unpack_from("<Q", region, 36 + 24 * i)[0]) for i in range(count)]
    if any(a[0] >= b[0] for a, b in zip(entries, entries[1:])):
        return None
    if struct.unpack_from("<I", region, end)[0] != crc32c(region[:end]):
        return None
    return generation, {device.hex(): counter for device, counter in entries}


def anchor_slots(data: bytes) -> list[tuple[int, dict[str, int]] | None] | None:
    """Both slots of an anchor file in the slot format, None for a file of the first format."""
    half = len(data) // 2
    if len(data) >= 2 * ANCHOR_BLOCK and len(data) % (2 * ANCHOR_BLOCK) == 0 and \
            (data.startswith(ANCHOR_MAGIC) or data[half:].startswith(ANCHOR_MAGIC)):
        return [anchor_slot(data[:half]), anchor_slot(data[half:])]
    return None


def anchor_vector(data: bytes) -> dict[str, int] | None:
    """The rollback anchor an anchor file holds ({device hex: counter}); None when damaged."""
    slots = anchor_slots(data)
    if slots is None:                       # the first format: "DEVICEHEX COUNTER" lines, read strictly
        vector = {}
        for line in data.split(b"\n")[:-1] if data.endswith(b"\n") or data == b"" else [b"not whole"]:
            parts = line.split(b" ")
            if len(parts) != 2 or len(parts[0]) != 32 or any(c not in b"0123456789abcdef" for c in parts[0]) or \
                    not parts[1].isdigit() or str(int(parts[1])).encode() != parts[1]:
                return None
            vector[parts[0].decode()] = int(parts[1])
        if list(vector) != sorted(vector) or len(vector) != len(data.split(b"\n")) - 1:
            return None                     # out of order, or a device twice
        return vector
    valid = [s for s in slots if s is not None]
    return max(valid, key=lambda s: s[0])[1] if valid else None


def anchor_file(vector: dict[str, int], generation: int = 1) -> bytes:
    """A new anchor file holding `vector` in its first slot (as kc writes one)."""
    body = ANCHOR_MAGIC + struct.pack("<QI", generation, len(vector)) + b"".join(
        bytes.fromhex(d) + struct.pack("<Q", c) for d, c in sorted(vector.items()))
    body += struct.pack("<I", crc32c(body))
    region = -(-(len(body) + 24 * len(vector)) // ANCHOR_BLOCK) * ANCHOR_BLOCK
    return body + bytes(2 * region - len(body))
