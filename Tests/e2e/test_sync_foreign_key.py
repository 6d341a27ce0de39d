"""A remote's copy under a key not linked to the vault (Docs/SYNC.md, rule 8; the security review of
December 2026, M1 and L3, and its repro-2026-12/m1-foreign-key-takeover.sh and l3-remote-kdf-cost.sh):
someone who can push but lacks the key makes a vault of their own, gives it the victim's vault id
(forgery.py), and pushes it. kc sync refuses it as a foreign vault by its rotation proofs alone
(Docs/FORMAT.md, "Rotation proofs"): before asking any password and before deriving anything, whatever
password it is given and whatever KDF cost its header asks; the vault and the remote stay as they were."""
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

import forgery
import kcformat
from kcharness import EXIT_DECODE, EXIT_NOT_MERGED, FAST_KDF, KC, assert_failure
from test_sync import GIT_ENV, git, machine, remote  # noqa: F401 (remote is a fixture)

ATTACKER_PASSWORD = "attacker-pw-Vq7!tR2#pL"
NOT_LINKED = "the remote's copy is sealed under a key that is not linked to this vault"

# Runs the command after it and reports on its last line of standard error the peak resident memory
# (KiB) of the processes it waited for: kc, and what kc waited for.
PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
        "print('peak-kib', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)")


@pytest.fixture
def victim(kc_bin, tmp_path, remote):  # noqa: F811
    """The repro's victim: a vault with a require-password item, a plain one and a GitHub token, synced."""
    kc = machine(kc_bin, tmp_path, "victim")
    kc.init()
    kc.add_generic("bank", "me", "MARKED-SECRET-123", "--require-password")
    kc.add_generic("mail", "me", "plain-secret")
    kc.add_internet("github.com", "me", "gitsecret", "-r", "https")
    kc.ok(["sync", "init", "--remote", remote])
    return kc


def forged_copy(kc_bin, tmp_path: Path, victim: KC, kdf=None, change_password=True) -> bytes:
    """The attacker's steps: `kc init` a vault of their own, give it the victim's vault id, add an item
    shadowing the victim's GitHub token, and (`change_password`) make a password change with `kc passwd`."""
    attacker = machine(kc_bin, tmp_path, "attacker")
    attacker.write_secret_file(attacker.password_file, ATTACKER_PASSWORD + "\n")
    own, forged = attacker.home / "own.kc", attacker.home / "forged.kc"
    attacker.ok(["--vault", own, "init", *FAST_KDF])
    attacker.ok(["--vault", own, "add", "internet", "-s", "github.com", "-a", "me", "-r", "https", "--password-stdin"],
                input="attacker-token")
    victim_id = bytes.fromhex(kcformat.vault_id(victim.vault_path.read_bytes()))
    forged.write_bytes(forgery.reid(own.read_bytes(), ATTACKER_PASSWORD.encode(), victim_id, kdf))
    if change_password:
        attacker.ok(["--vault", forged, "passwd", "--new-password-file", attacker.password_file])
    return forged.read_bytes()


def push_as_attacker(tmp_path: Path, remote: Path, vault: bytes) -> str:  # noqa: F811
    """Clones the remote, puts `vault` in place of its vault file, commits and pushes; the remote's new head."""
    clone = tmp_path / "attacker-clone"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin"})
    (clone / "login.kc").write_bytes(vault)
    git(clone, "add", "login.kc")
    git(clone, "-c", "user.name=a", "-c", "user.email=a@example.invalid", "commit", "-qm", "kc sync")
    git(clone, "push", "-q", "origin", "HEAD")
    return git(remote, "rev-parse", "main").strip()


def told(kc: KC) -> Path:
    """The password the attacker told the victim, in a file for --new-password-file."""
    return kc.write_secret_file(kc.home / "told", ATTACKER_PASSWORD + "\n")


def assert_untouched(kc: KC, vault: bytes, remote: Path, head: str) -> None:  # noqa: F811
    assert kc.vault_path.read_bytes() == vault, "the vault was left as it was"
    assert git(remote, "rev-parse", "main").strip() == head, "nothing was pushed"
    assert kc.ok(["find", "-s", "bank", "-w"]).stdout == "MARKED-SECRET-123\n", "the victim's own password opens it"
    answer = kc.ok(["git-credential", "get"], input="protocol=https\nhost=github.com\n\n").stdout
    assert "password=gitsecret\n" in answer and "attacker-token" not in answer


def test_a_copy_under_a_key_not_linked_to_the_vault_is_refused_whatever_password_is_given(kc_bin, tmp_path, remote, victim):  # noqa: F811
    head = push_as_attacker(tmp_path, remote, forged_copy(kc_bin, tmp_path, victim))
    vault = victim.vault_path.read_bytes()
    # No password set elsewhere is at hand: the copy is refused as foreign all the same, not for a
    # password it would need.
    result = victim.run(["sync"])
    assert_failure(result, "errSecDecode", EXIT_DECODE)
    assert NOT_LINKED in result.stderr, result
    assert_untouched(victim, vault, remote, head)
    # On a terminal, kc asks nothing: the refusal comes before any prompt.
    child = victim.spawn(["sync"])
    index = child.expect_exact(["Master password set on another machine", NOT_LINKED, pexpect.EOF])
    assert index == 1, child.before
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_DECODE
    assert_untouched(victim, vault, remote, head)
    # Given the password the attacker told (it would open the copy's header), the copy is still
    # refused before it is tried: it carries no proof made with one of the vault's keys.
    result = victim.run(["sync", "--new-password-file", told(victim)])
    assert_failure(result, "errSecDecode", EXIT_DECODE)
    assert NOT_LINKED in result.stderr, result
    assert "replaced on another machine" not in result.stderr
    assert_untouched(victim, vault, remote, head)
    # Every later sync says the same.
    assert NOT_LINKED in victim.run(["sync", "--new-password-file", told(victim)]).stderr


def test_a_copy_asking_a_costlier_key_derivation_is_refused_before_anything_is_derived(kc_bin, tmp_path, remote, victim):  # noqa: F811
    # The victim's vault derives with 8 KiB; the copy asks for 64 MiB (the review's script: up to 4 GiB).
    # It carries no rotation proof, so it is refused as foreign before its cost is even looked at.
    heavy = 64 << 20
    head = push_as_attacker(tmp_path, remote, forged_copy(kc_bin, tmp_path, victim, kdf=(1, heavy), change_password=False))
    vault = victim.vault_path.read_bytes()
    for args in (["sync"], ["sync", "--new-password-file", told(victim)]):
        result = victim.run(args, wrapper=(sys.executable, "-c", PEAK))
        # Refused as it is, not asking for a password set elsewhere (which needs a derivation to try).
        assert_failure(result, "errSecDecode", EXIT_DECODE)
        assert NOT_LINKED in result.stderr, result
        peak = int(result.stderr.splitlines()[-1].split()[1])
        assert peak * 1024 < heavy // 2, f"kc's peak memory {peak} KiB: it derived with the copy's parameters"
        assert_untouched(victim, vault, remote, head)


def test_the_merge_driver_does_not_take_a_forged_copy_either(kc_bin, tmp_path, victim):
    ours = tmp_path / "ours.kc"
    ours.write_bytes(victim.vault_path.read_bytes())
    theirs = tmp_path / "theirs.kc"
    theirs.write_bytes(forged_copy(kc_bin, tmp_path, victim))
    for password in (victim.master_password, ATTACKER_PASSWORD):
        victim.write_secret_file(victim.password_file, password + "\n")
        result = victim.run(["merge-driver", ours, ours, theirs])
        assert result.returncode == EXIT_NOT_MERGED, result
        assert ours.read_bytes() == victim.vault_path.read_bytes(), "OURS left as it was"
