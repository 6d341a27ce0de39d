"""kc init: creation, permissions, refusal to overwrite, KDF flags, master password sources."""
import os
import stat

import pytest

from kcharness import (EXIT_DUPLICATE_KEYCHAIN, EXIT_INTERACTION, EXIT_NOT_FOUND, EXIT_PARAM, FAST_KDF, KC,
                       assert_failure)


def test_init_creates_private_vault(kc):
    result = kc.init()
    assert "created the vault" in result.stderr
    assert kc.vault_path.is_file()
    assert kc.mode(kc.vault_path) == 0o600
    assert kc.mode(kc.vault_path.parent) == 0o700
    assert result.stdout == ""
    assert kc.ok(["list", "--json"]).stdout == "[]\n"


def test_init_permissions_hold_under_umask_000(kc_bin, tmp_path):
    kc = KC(kc_bin, tmp_path / "h")
    old = os.umask(0)
    try:
        kc.init()
    finally:
        os.umask(old)
    assert kc.mode(kc.vault_path) == 0o600
    assert kc.mode(kc.vault_path.parent) == 0o700


def test_init_twice_is_refused_and_vault_unchanged(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me")
    before = kc.vault_path.read_bytes()
    result = kc.run(["init", *FAST_KDF])
    assert_failure(result, "errSecDuplicateKeychain", EXIT_DUPLICATE_KEYCHAIN)
    assert "already exists" in result.stderr
    assert kc.vault_path.read_bytes() == before


def test_init_at_explicit_path_and_env(kc):
    flagged = kc.home / "elsewhere" / "work.kc"
    kc.ok(["init", *FAST_KDF, "--vault", str(flagged)])
    assert flagged.exists() and not kc.vault_path.exists()
    from_env = kc.home / "env.kc"
    kc.ok(["init", *FAST_KDF], env={"KC_VAULT": str(from_env)})
    assert from_env.exists()
    # The explicit flag wins over KC_VAULT.
    kc.ok(["add", "generic", "-s", "x", "--password-stdin", "--vault", str(flagged)], input="p",
          env={"KC_VAULT": str(from_env)})
    assert kc.ok(["find", "-s", "x", "-w", "--vault", str(flagged)], env={"KC_VAULT": str(from_env)}).stdout == "p\n"
    assert_failure(kc.run(["find", "-s", "x"], env={"KC_VAULT": str(from_env)}), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_init_default_path_without_xdg(kc):
    kc.ok(["init", *FAST_KDF], unset=("XDG_DATA_HOME",))
    assert (kc.home / ".local" / "share" / "kc" / "login.kc").exists()


def test_weak_kdf_warns(kc):
    result = kc.init()
    assert "kc: warning:" in result.stderr and "INTERACTIVE" in result.stderr


def test_interactive_kdf_does_not_warn(kc):
    result = kc.ok(["init", "--kdf-ops", "2", "--kdf-memory", "64M"])
    assert "warning" not in result.stderr


@pytest.mark.parametrize("args,fragment", [
    (["--kdf-ops", "0"], "--kdf-ops"),
    (["--kdf-ops", "21"], "--kdf-ops"),
    (["--kdf-ops", "many"], "--kdf-ops"),
    (["--kdf-memory", "lots"], "--kdf-memory"),
    (["--kdf-memory", "4K"], "--kdf-memory"),
    (["--kdf-memory", "5G"], "--kdf-memory"),
    (["--kdf-memory"], "needs a value"),
])
def test_bad_kdf_values_are_usage_errors(kc, args, fragment):
    result = kc.run(["init", *args])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert fragment in result.stderr
    assert not kc.vault_path.exists()


def test_init_from_descriptor_and_newline_dropped(kc):
    read_end, write_end = os.pipe()
    os.write(write_end, b"fd-password-Vq7!tR2#\n")
    os.close(write_end)
    try:
        kc.ok(["init", *FAST_KDF, "--master-password-fd", str(read_end)], unset=("KC_MASTER_PASSWORD_FILE",),
              pass_fds=(read_end,))
    finally:
        os.close(read_end)
    # The same password without the newline, from a file, opens it.
    other = KC.write_secret_file(kc.home / "pw2", "fd-password-Vq7!tR2#")
    kc.ok(["list"], env={"KC_MASTER_PASSWORD_FILE": str(other)})
    # The descriptor wins over the file.
    wrong = KC.write_secret_file(kc.home / "wrong", "nope")
    read_end, write_end = os.pipe()
    os.write(write_end, b"fd-password-Vq7!tR2#")
    os.close(write_end)
    try:
        kc.ok(["list", "--master-password-fd", str(read_end)], env={"KC_MASTER_PASSWORD_FILE": str(wrong)},
              pass_fds=(read_end,))
    finally:
        os.close(read_end)


def test_master_password_fd_zero_is_refused(kc_ready):
    result = kc_ready.run(["list", "--master-password-fd", "0"], input=kc_ready.master_password)
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "standard input" in result.stderr


def test_master_password_fd_not_open(kc_ready):
    result = kc_ready.run(["list", "--master-password-fd", "57"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "not open" in result.stderr


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
def test_readable_password_file_is_refused(kc, mode):
    os.chmod(kc.password_file, mode)
    result = kc.run(["init", *FAST_KDF])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "chmod 600" in (result.hint or "")
    assert kc.master_password not in result.stderr
    assert not kc.vault_path.exists()


def test_read_only_password_file_is_accepted(kc):
    os.chmod(kc.password_file, 0o400)
    kc.init()


def test_symlinked_password_file_is_refused(kc):
    link = kc.home / "link"
    link.symlink_to(kc.password_file)
    result = kc.run(["init", *FAST_KDF], env={"KC_MASTER_PASSWORD_FILE": str(link)})
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "symbolic link" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_password_file_of_another_user_is_refused(kc):
    os.chown(kc.password_file, 65534, 65534)
    result = kc.run(["init", *FAST_KDF])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "not owned by you" in result.stderr


def test_empty_password_file_is_refused(kc):
    KC.write_secret_file(kc.password_file, "\n")
    result = kc.run(["init", *FAST_KDF])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "empty" in result.stderr
    assert not kc.vault_path.exists()


def test_no_password_source_and_no_terminal(kc):
    result = kc.run(["init", *FAST_KDF], unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert "--master-password-fd" in (result.hint or "")
    assert not kc.vault_path.exists()


def test_password_from_environment_value_is_never_used(kc_ready):
    # A variable holding the password itself is not a source: without the file, kc must not unlock.
    result = kc_ready.run(["list"], unset=("KC_MASTER_PASSWORD_FILE",),
                          env={"KC_MASTER_PASSWORD": kc_ready.master_password})
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)


def test_vault_file_mode_is_private_after_writes(kc_ready):
    kc_ready.add_generic("a")
    assert stat.S_IMODE(os.stat(kc_ready.vault_path).st_mode) == 0o600
