"""A cold `kc find` and `kc add` (no agent) on a vault synced from two machines, where both machines
added one primary key offline (FORMAT.md, Replay semantics, rule 5: the later item holds the key,
the other is hidden): the answers are the holder's, and the vault is read once (the flat scan,
counted with strace), not read again whole as before the scan learnt which item holds a key."""
import time

from kcharness import EXIT_DUPLICATE, EXIT_NOT_FOUND, assert_failure
from test_sync import pair, remote, secret  # noqa: F401  (pytest fixtures)


def bytes_read(kc, args, input=None) -> tuple:
    """Runs kc with `args` under strace: its result and the bytes its pread64 calls read."""
    trace = kc.home / "tmp" / "pread.trace"
    trace.unlink(missing_ok=True)
    result = kc.run(args, input=input, wrapper=["strace", "-f", "-qq", "-e", "trace=pread64", "-o", trace])
    read = sum(int(line.rsplit("=", 1)[1].split()[0]) for line in trace.read_text().splitlines()
               if "pread64(" in line and "=" in line and not line.rstrip().endswith("?"))
    return result, read


def test_cold_find_on_a_synced_vault_answers_the_key_holder_in_one_read(pair, tmp_path):
    laptop, desktop = pair
    # Enough items that the vault dwarfs every other file kc reads.
    netrc = tmp_path / "netrc"
    netrc.write_text("".join(f"machine host{n}.example login me password pw{n}\n" for n in range(300)))
    laptop.ok(["import", "netrc", netrc])
    laptop.add_generic("x", "me", "laptop-pw", "-l", "from-laptop")
    time.sleep(0.01)
    desktop.add_generic("x", "me", "desktop-pw")   # later: holds the key
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    size = laptop.vault_path.stat().st_size
    assert size > 60_000
    found, read = bytes_read(laptop, ["find", "generic", "-s", "x", "-a", "me", "-w"])
    assert found.returncode == 0 and found.stdout == "desktop-pw\n", found
    assert size <= read < 1.5 * size, f"read {read} bytes of a {size}-byte vault: not one pass"
    # The hidden item is not found by what only it matches, and its key is taken.
    hidden, read = bytes_read(laptop, ["find", "generic", "-l", "from-laptop"])
    assert_failure(hidden, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert size <= read < 1.5 * size, f"read {read} bytes of a {size}-byte vault: not one pass"
    duplicate, read = bytes_read(laptop, ["add", "generic", "-s", "x", "-a", "me", "--password-stdin"], input="third")
    assert_failure(duplicate, "errSecDuplicateItem", EXIT_DUPLICATE)
    assert size <= read < 1.5 * size, f"read {read} bytes of a {size}-byte vault: not one pass"
    # Both machines answer alike; the other items are found as before.
    assert secret(desktop, "x") == "desktop-pw"
    assert laptop.ok(["find", "internet", "-s", "host299.example", "-w"]).stdout == "pw299\n"
