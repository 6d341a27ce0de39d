"""kc import pass against what gpg may do besides decrypting: give far more than a pass entry (a large
attachment, or a small file that decompresses to gigabytes), write a lot on its standard error before or
after the entry, or take its time. A fake `gpg` first on PATH plays each part; the store's `.gpg` files
hold the plaintext it prints."""
import os
import subprocess
import time

import procmemory
from kcharness import EXIT_DECODE, assert_failure, items_with_secrets, only_item

NOISE = "yes 'gpg: WARNING: unsafe permissions on configuration file' | head -c 204800 >&2"
FAKE_GPG = f"""#!/bin/sh
file="$5"                    # gpg --quiet --batch --decrypt -- FILE
case "$file" in
  */huge.gpg) head -c 2097152 /dev/zero; exit 0 ;;
  */noisy-first.gpg) {NOISE} ;;
  */noisy-failing.gpg) echo 'gpg: decryption failed: No secret key' >&2; {NOISE}; exit 2 ;;
  */noisy-after.gpg) cat "$file"; exec 1>&-; {NOISE}; exit 0 ;;
  */zz-waits.gpg) : > "$PASS_TEST_STARTED"; cat "$PASS_TEST_FIFO" > /dev/null ;;
esac
exec cat "$file"
"""
ENTRIES = {
    "huge": "never read\n",
    "noisy-first": "first-pw\nlogin: first\n",
    "noisy-failing": "never read\n",
    "noisy-after": "after-pw\nlogin: after\n",
    "plain": "plain-pw\nuser: plain\n",
}


def make_store(tmp_path, entries):
    store = tmp_path / "store"
    store.mkdir()
    for name, text in entries.items():
        (store / f"{name}.gpg").write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gpg").write_text(FAKE_GPG)
    (bin_dir / "gpg").chmod(0o755)
    return store, {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_an_entry_over_1_mib_decrypted_is_rejected_by_name_and_much_error_output_blocks_nothing(kc_ready, tmp_path):
    store, env = make_store(tmp_path, ENTRIES)
    before = kc_ready.vault_path.read_bytes()
    refused = kc_ready.run(["import", "pass", str(store)], env=env, timeout=60)
    assert_failure(refused, "errSecDecode", EXIT_DECODE)
    assert f"kc: error: {store}/huge.gpg: entry 0 (huge.gpg): decrypted, it is larger than 1 MiB" in refused.stderr
    assert kc_ready.vault_path.read_bytes() == before
    result = kc_ready.ok(["import", "pass", "--partial", str(store)], env=env, timeout=60)
    assert "3 added, 0 skipped as duplicate, 2 rejected" in result.stderr
    assert "rejected entry 0 (huge.gpg): decrypted, it is larger than 1 MiB" in result.stdout
    assert ("rejected entry 2 (noisy-failing.gpg): gpg could not decrypt it (exit status 2): "
            "gpg: decryption failed: No secret key\n") in result.stdout
    items = items_with_secrets(kc_ready)
    assert [only_item(items, service=name)["password"] for name in ("noisy-first", "noisy-after", "plain")] == [
        "first-pw", "after-pw", "plain-pw"]



def test_the_text_of_other_note_lines_stays_in_locked_memory(kc_ready, tmp_path):
    """While gpg decrypts the last entry, the text before the colon of the other lines of the entries read
    is nowhere in kc's ordinary memory: only the names login, user, username and url are compared, in place.
    (The lines are 300-odd bytes: a freed copy of that size stays in the heap until one of its size is made.)"""
    secret = "recovery-code-8f3k2x9q7-" + "q7" * 150
    store, env = make_store(tmp_path, {f"a{i}": f"pw{i}\n{secret}-{i}:used\nlogin: me\n" for i in range(20)}
                            | {"zz-waits": "last-pw\n"})
    fifo, started = tmp_path / "fifo", tmp_path / "started"
    os.mkfifo(fifo)
    process = kc_ready.popen(["import", "pass", str(store)], stdin=subprocess.DEVNULL,
                             env={**env, "PASS_TEST_FIFO": str(fifo), "PASS_TEST_STARTED": str(started)})
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        hits = procmemory.find(process.pid, secret[:64].encode())
        assert hits and all(hit.locked for hit in hits), hits
    finally:
        with open(fifo, "w"):
            pass
        process.communicate(timeout=60)
    assert process.returncode == 0
