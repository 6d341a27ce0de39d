"""Damaged vaults: kc reports an error (or a torn-tail warning) and never changes the file."""
import hashlib

import pytest

from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE, EXIT_NOT_FOUND, assert_failure

HEADER_LENGTH = 140


@pytest.fixture
def populated(kc_ready):
    kc = kc_ready
    for i in range(4):
        kc.add_generic(f"service-{i}", "acct", f"secret-{i}")
    return kc


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


ALL_COMMANDS = [
    (["find", "-s", "service-0"], None),
    (["list"], None),
    (["add", "generic", "-s", "new", "--password-stdin"], "new-secret"),
    (["update", "generic", "-s", "service-1", "--set-label", "x"], None),
    (["delete", "generic", "-s", "service-2"], None),
]


def test_truncated_header_is_decode_error_and_unchanged(populated):
    kc = populated
    data = kc.vault_path.read_bytes()
    kc.vault_path.write_bytes(data[:100])
    before = digest(kc.vault_path)
    for args, stdin in ALL_COMMANDS:
        result = kc.run(args, input=stdin)
        assert_failure(result, "errSecDecode", EXIT_DECODE)
        assert digest(kc.vault_path) == before


def test_truncated_last_record_is_a_torn_tail_and_reads_do_not_change_it(populated):
    kc = populated
    data = kc.vault_path.read_bytes()
    kc.vault_path.write_bytes(data[:-7])
    before = digest(kc.vault_path)
    result = kc.ok(["find", "-s", "service-0", "-w"])
    assert result.stdout == "secret-0\n"
    assert "kc: warning:" in result.stderr
    assert_failure(kc.run(["find", "-s", "service-3"]), "errSecItemNotFound", EXIT_NOT_FOUND)   # the torn record is not an item
    listed = kc.ok(["list", "--json"])
    assert listed.stdout.count('"class"') == 3
    assert digest(kc.vault_path) == before


@pytest.mark.parametrize("where", ["first-record", "middle", "last-byte"])
def test_bit_flip_in_a_record_is_decode_error_and_unchanged(populated, where):
    kc = populated
    data = bytearray(kc.vault_path.read_bytes())
    offset = {"first-record": HEADER_LENGTH + 40, "middle": (HEADER_LENGTH + len(data)) // 2,
              "last-byte": len(data) - 1}[where]
    data[offset] ^= 0x10
    kc.vault_path.write_bytes(bytes(data))
    before = digest(kc.vault_path)
    for args, stdin in ALL_COMMANDS:
        result = kc.run(args, input=stdin)
        assert result.returncode == EXIT_DECODE, result
        assert result.error_name == "errSecDecode"
        assert "secret-" not in result.stdout + result.stderr
        assert digest(kc.vault_path) == before


def test_bit_flip_in_the_wrapped_key_is_refused_and_unchanged(populated):
    kc = populated
    data = bytearray(kc.vault_path.read_bytes())
    data[100] ^= 0x01     # inside the wrapped key (bytes 88..135); the header checksum then fails too
    kc.vault_path.write_bytes(bytes(data))
    before = digest(kc.vault_path)
    result = kc.run(["find", "-s", "service-0"])
    assert result.returncode in (EXIT_AUTH_FAILED, EXIT_DECODE), result
    assert result.error_name in ("errSecAuthFailed", "errSecDecode")
    assert digest(kc.vault_path) == before


def test_not_a_vault(kc):
    kc.vault_path.parent.mkdir(parents=True)
    kc.vault_path.write_bytes(b"hello, this is not a vault at all" * 10)
    kc.vault_path.chmod(0o600)
    before = digest(kc.vault_path)
    assert_failure(kc.run(["list"]), "errSecDecode", EXIT_DECODE)
    assert digest(kc.vault_path) == before
