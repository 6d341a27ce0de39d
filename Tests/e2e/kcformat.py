"""kc's vault format, as far as the end-to-end tests need it (Docs/FORMAT.md): CRC-32C, the header's
KDF fields and checksum, record frames, and the test vectors in Docs/vectors.

Written from the document, not from Sources/KCFormat; test_format_helpers.py checks every helper
against the committed vectors, so it cannot drift from what kc writes.
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "Docs" / "vectors"

HEADER_LENGTH = 140
HEADER_CHECKSUM_OFFSET = 136
FRAME_LENGTH = 16


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
    sequence: int

    @property
    def body(self) -> tuple[int, int]:
        return self.offset + FRAME_LENGTH, self.end


def frames(data: bytes) -> list[Frame]:
    """The complete records of an intact vault, in order (stops at the first incomplete one)."""
    out = []
    offset = HEADER_LENGTH
    while offset + FRAME_LENGTH <= len(data):
        length, sequence, crc = struct.unpack_from("<IQI", data, offset)
        assert crc == crc32c(data[offset:offset + 12]), f"bad frame checksum at {offset}"
        end = offset + FRAME_LENGTH + length
        if end > len(data):
            break
        out.append(Frame(offset, end, sequence))
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
