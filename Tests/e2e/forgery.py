"""A vault file given another vault's id, as someone who can push to a remote but lacks its key
builds one (the security review of December 2026, M1 and L3; the project's copy of its
repro-2026-12/reid.py): a vault whose password the forger knows is sealed again under the victim's
vault id, its key wrapped again (the header's associated data holds the vault id) and every record
sealed again with the new associated-data chain; optionally with other Argon2id parameters."""
import ctypes
import os
import struct

import kcformat as F


def _seal(plain: bytes, key: bytes, nonce: bytes, ad: bytes) -> bytes:
    out = ctypes.create_string_buffer(len(plain) + 16)
    length = ctypes.c_ulonglong(0)
    rc = F._lib().crypto_aead_xchacha20poly1305_ietf_encrypt(out, ctypes.byref(length), plain, ctypes.c_ulonglong(len(plain)),
                                                             ad, ctypes.c_ulonglong(len(ad)), None, nonce, key)
    assert rc == 0, "seal failed"
    return out.raw[:length.value]


def reid(data: bytes, password: bytes, vault_id: bytes, kdf: tuple[int, int] | None = None) -> bytes:
    """`data` (a vault `password` opens) under `vault_id`, with the Argon2id (opslimit, memlimit) `kdf`
    (default: the file's own)."""
    key = F.vault_key(data, password)
    ops, memory = kdf or F.header_kdf(data)
    header = bytearray(data[:140])
    header[12:28] = vault_id
    struct.pack_into("<QQ", header, 32, ops, memory)
    header[48:64], header[64:88] = os.urandom(16), os.urandom(24)
    header[88:136] = _seal(key, F.derive_key(password, bytes(header[48:64]), ops, memory), bytes(header[64:88]), bytes(header[:88]))
    struct.pack_into("<I", header, 136, F.crc32c(bytes(header[:136])))
    out, previous_old, previous_new = bytes(header), bytes(16), bytes(16)
    for frame in F.frames(data):
        body, frame_bytes = data[frame.offset + 16:frame.end], data[frame.offset:frame.offset + 16]
        domain = b"kc page v1" if frame.is_page else b"kc record v1"
        plain = F.aead_open(body[24:], key, body[:24], domain + data[12:28] + frame_bytes + previous_old)
        assert plain is not None, "a record does not open"
        nonce = os.urandom(24)
        sealed = _seal(plain, key, nonce, domain + vault_id + frame_bytes + previous_new)
        out += frame_bytes + nonce + sealed
        previous_old, previous_new = body[-16:], sealed[-16:]
    return out
