"""Ask-again items hidden by another machine's item of the same primary key (two machines added
`-s x -a me` offline; FORMAT.md, Replay semantics, rule 5: the later holds the key, the other is
hidden). An edit or delete of the holder ends the hidden item too, so the unlocked agent asks for
the master password when the hidden one is marked, as for the holder itself."""
import time

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcharness import EXIT_INTERACTION, assert_failure
from test_sync import pair, remote  # noqa: F401  (pytest fixtures)


def test_ending_a_marked_hidden_item_asks_for_the_master_password(pair):
    laptop, desktop = pair
    laptop.add_generic("x", "me", "laptop-pw", "--require-password")
    laptop.add_generic("y", "me", "laptop-y", "--require-password")
    time.sleep(0.01)
    desktop.add_generic("x", "me", "desktop-pw")   # later: holds x's key, the laptop's x is hidden
    desktop.add_generic("y", "me", "desktop-y")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    with_runtime_folder(laptop)
    try:
        unlock(laptop)
        # The holders are not marked, but what they hide is: no terminal and no password source.
        for args in (["delete", "generic", "-s", "x", "-a", "me"],
                     ["update", "generic", "-s", "x", "-a", "me", "--password-stdin"],
                     ["update", "generic", "-s", "x", "-a", "me", "--set-comment", "attributes only"],
                     ["add", "generic", "-s", "y", "-a", "me", "-U", "--password-stdin"]):
            result = laptop.run(args, input="new", unset=NO_SOURCE)
            assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
        assert laptop.ok(["find", "generic", "-s", "x", "-w"], unset=NO_SOURCE).stdout == "desktop-pw\n"
        # With the master password (a source), the delete goes through.
        laptop.ok(["delete", "generic", "-s", "x", "-a", "me"])
        assert laptop.run(["find", "generic", "-s", "x"], unset=NO_SOURCE).returncode != 0
    finally:
        stop_agents(laptop)
