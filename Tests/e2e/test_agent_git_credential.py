"""kc as git's credential helper through an unlocked agent: 'store' never reveals an item with the
require-password mark (comparing would ask for the master password on every git push), and leaves
it unchanged; 'erase' deletes it once the master password is given again (as kc delete does; see
test_agent_ask_again_writes.py for its prompt)."""
import pexpect

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401

PROMPT = "This item asks for the master password again"
REQUEST = "protocol=https\nhost=h\nusername=alice\npassword={}\n\n"


def test_store_leaves_a_marked_item_alone_without_a_prompt_and_erase_deletes_it(akc):
    akc.add_internet("h", "alice", "bank-secret", "-r", "https", "--require-password")
    unlock(akc)
    before = akc.vault_path.read_bytes()
    for password in ("bank-secret", "changed"):
        result = akc.run(["git-credential", "store"], input=REQUEST.format(password), unset=NO_SOURCE)
        assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result
        # On a terminal too: no prompt, nothing asked.
        child = akc.spawn(["git-credential", "store"], unset=NO_SOURCE)
        child.send(REQUEST.format(password))
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and PROMPT not in child.before, child.before
    assert akc.vault_path.read_bytes() == before
    akc.ok(["git-credential", "erase"], input="protocol=https\nhost=h\nusername=alice\n\n")   # the password source answers
    assert "alice" not in akc.ok(["list"], unset=NO_SOURCE).stdout
