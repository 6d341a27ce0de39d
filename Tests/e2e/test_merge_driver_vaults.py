"""`kc merge-driver` given copies of two different vaults (Docs/SYNC.md, the driver): refused as such,
errSecParam worded, exit 1, OURS untouched, whether or not the vault's agent is unlocked and whether or
not a master password source is given; never reported as a missing password."""
import pytest

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401  (pytest fixture)
from kcharness import EXIT_NOT_MERGED


@pytest.mark.parametrize("unlocked", [False, True])
@pytest.mark.parametrize("source", [False, True])
@pytest.mark.parametrize("other_side", ["ours", "theirs"])
def test_copies_of_two_vaults_are_refused_as_such(akc, tmp_path, unlocked, source, other_side):
    if unlocked:
        unlock(akc)
    other = tmp_path / "other.kc"
    akc.ok(["--vault", other, "init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    ours, theirs = tmp_path / "ours.kc", tmp_path / "theirs.kc"
    mine = akc.vault_path.read_bytes()
    ours.write_bytes(other.read_bytes() if other_side == "ours" else mine)
    theirs.write_bytes(other.read_bytes() if other_side == "theirs" else mine)
    before = ours.read_bytes()
    result = akc.run(["--vault", akc.vault_path, "merge-driver", "O", ours, theirs, "7", "login.kc"],
                     unset=() if source else NO_SOURCE)
    assert result.returncode == EXIT_NOT_MERGED, result
    errors = [line for line in result.stderr.splitlines() if line.startswith("kc: error: ")]
    assert len(errors) == 1 and "cannot merge two different vaults" in errors[0] and errors[0].endswith("(errSecParam)"), result.stderr
    assert ours.read_bytes() == before
