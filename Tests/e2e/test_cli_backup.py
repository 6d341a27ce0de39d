"""kc backup FILE: a consistent, verified copy of the encrypted vault, written new, taken without the master password."""
import fcntl
import os
import re
import threading
import time

from kcharness import assert_failure


def test_backup_is_an_exact_copy_that_opens_without_asking_at_backup_time(kc_ready, tmp_path):
    kc = kc_ready
    kc.add_generic("github.com", "me", "gh-secret")
    target = tmp_path / "copy.kc"
    # No master password anywhere and no terminal: a prompt would fail, so none is made.
    result = kc.ok(["backup", str(target)], unset=("KC_MASTER_PASSWORD_FILE",))
    assert "verified" in result.stderr
    assert target.read_bytes() == kc.vault_path.read_bytes()
    assert kc.mode(target) == 0o600
    assert not [p for p in tmp_path.iterdir() if ".kc-tmp-" in p.name]
    assert kc.ok(["--vault", str(target), "find", "generic", "-s", "github.com", "-w"]).stdout == "gh-secret\n"
    check = kc.ok(["--vault", str(target), "check"])
    assert "items: 1" in check.stdout
    # Once the vault moves on, the copy is older than what this machine has seen: a rollback.
    kc.add_generic("later.example", "me")
    assert_failure(kc.run(["--vault", str(target), "check"]), "errSecVerifyFailed")


def test_backup_of_a_named_keychain(kc, tmp_path):
    kc.ok(["keychain", "create", "work", "--kdf-ops", "1", "--kdf-memory", "8K"])
    target = tmp_path / "work-copy.kc"
    kc.ok(["--keychain", "work", "backup", str(target)])
    assert target.read_bytes() == (kc.home / "data" / "kc" / "work.kc").read_bytes()


def test_backup_refuses_an_existing_file_and_a_symbolic_link(kc_ready, tmp_path):
    kc = kc_ready
    existing = tmp_path / "existing.kc"
    existing.write_bytes(b"keep me")
    result = kc.run(["backup", str(existing)])
    assert_failure(result, "errSecDuplicateKeychain")
    assert "left untouched" in result.stderr
    assert existing.read_bytes() == b"keep me"
    link = tmp_path / "link.kc"
    link.symlink_to(existing)
    assert_failure(kc.run(["backup", str(link)]), "errSecDuplicateKeychain")
    assert existing.read_bytes() == b"keep me" and link.is_symlink()
    dangling = tmp_path / "dangling.kc"
    dangling.symlink_to(tmp_path / "nowhere.kc")
    assert_failure(kc.run(["backup", str(dangling)]), "errSecDuplicateKeychain")
    assert not (tmp_path / "nowhere.kc").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["dangling.kc", "existing.kc", "link.kc"]


def test_backup_of_a_missing_vault_writes_nothing(kc, tmp_path):
    target = tmp_path / "copy.kc"
    assert_failure(kc.run(["backup", str(target)]), "errSecNoSuchKeychain")
    assert not target.exists()


def test_backups_taken_during_concurrent_writers_are_whole(kc_ready, tmp_path):
    kc = kc_ready
    stop = threading.Event()
    failures = []

    def writer(n):
        i = 0
        while not stop.is_set():
            result = kc.run(["add", "generic", "-s", f"w{n}-{i}", "--password-stdin", "--lock-timeout", "60"],
                            input="x" * (100 + i))
            if result.returncode != 0:
                failures.append(result)
            i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    counts = []
    try:
        for k in range(12):
            target = tmp_path / f"b{k}.kc"
            kc.ok(["backup", str(target), "--lock-timeout", "60"])
            # A fresh state folder: this machine's anchors already saw the vault move past the copy.
            check = kc.run(["--vault", str(target), "check"], env={"XDG_STATE_HOME": str(tmp_path / f"state{k}")})
            assert check.returncode == 0, check
            assert "torn tail" not in check.stdout and "damaged" not in check.stdout, check.stdout
            counts.append(int(re.search(r"^items: (\d+)$", check.stdout, re.M).group(1)))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not failures, failures[0]
    assert counts == sorted(counts) and counts[-1] > counts[0], counts


def test_backup_waits_for_a_writer_holding_the_lock(kc_ready, tmp_path):
    """A writer mid-append holds the exclusive lock: the copy waits, and never holds the half-written record."""
    kc = kc_ready
    kc.add_generic("one", "me")
    whole = kc.vault_path.read_bytes()
    with open(kc.vault_path, "r+b") as vault:
        fcntl.flock(vault, fcntl.LOCK_EX)
        assert_failure(kc.run(["backup", str(tmp_path / "timeout.kc"), "--lock-timeout", "0.3"]), "errSecNotAvailable")
        assert not (tmp_path / "timeout.kc").exists()
        vault.seek(0, os.SEEK_END)
        vault.write(b"\x00half a record")
        vault.flush()
        target = tmp_path / "copy.kc"
        waiting = kc.popen(["backup", str(target), "--lock-timeout", "60"])
        time.sleep(0.5)
        assert waiting.poll() is None and not target.exists()
        vault.truncate(len(whole))
        vault.flush()
        fcntl.flock(vault, fcntl.LOCK_UN)
    assert waiting.wait(timeout=60) == 0
    assert target.read_bytes() == whole
