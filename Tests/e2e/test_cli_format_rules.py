"""What Docs/FORMAT.md says kc does with the master password's line ending and the KDF memory."""
from __future__ import annotations

from kcharness import EXIT_AUTH_FAILED, EXIT_NOT_FOUND, EXIT_PARAM, assert_failure

PW = "pw-Format-Rules-7q!x"   # strong enough for init (zxcvbn: 50 bits or more)


def test_kdf_memory_must_be_whole_kib(kc):
    result = kc.run(["init", "--kdf-ops", "1", "--kdf-memory", "10000"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "whole number of KiB" in result.stderr, result
    assert not kc.vault_path.exists()
    kc.ok(["init", "--kdf-ops", "1", "--kdf-memory", "9216"])
    assert int.from_bytes(kc.vault_path.read_bytes()[40:48], "little") == 9216


def test_one_trailing_line_ending_lf_or_crlf_is_dropped(kc):
    kc.write_secret_file(kc.password_file, PW + "\r\n")
    kc.ok(["init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    kc.write_secret_file(kc.password_file, PW + "\n")   # the same password: PW
    assert kc.run(["find", "--all"]).returncode == EXIT_NOT_FOUND
    kc.write_secret_file(kc.password_file, PW)
    assert kc.run(["find", "--all"]).returncode == EXIT_NOT_FOUND
    for other in (PW + "\n\n", PW + "\r", PW + "\r\r\n"):   # only one line ending is dropped
        kc.write_secret_file(kc.password_file, other)
        assert_failure(kc.run(["find", "--all"]), "errSecAuthFailed", EXIT_AUTH_FAILED)
