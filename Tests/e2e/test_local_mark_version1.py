"""A this-device-only mark (field 19) is never written to a version-1 vault (Docs/FORMAT.md, "The marks and
older kc builds"): the write that marks an item converts the vault to version 2 first, so a kc too old to
know the mark (which reads only version 1) cannot share the item. Through the master password and the agent."""
import pytest

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcformat import header_version, items
from kcharness import assert_failure
from test_format_versions import PASSWORD, install_vector


def marked(kc) -> dict:
    return {i.get("service") or i.get("server"): bool(i.get("thisDeviceOnly")) for i in items(kc.vault_path.read_bytes(), PASSWORD)}


@pytest.fixture(params=["password", "agent"])
def v1(request, kc):
    install_vector(kc, "valid-items")
    assert header_version(kc.vault_path.read_bytes()) == 1
    if request.param == "agent":
        with_runtime_folder(kc)
        unlock(kc)
        kc.unset = ()   # the agent serves; the conversion asks the master password again (the file here)
    else:
        kc.unset = ()
    yield kc
    if request.param == "agent":
        stop_agents(kc)


def test_an_unmarked_add_keeps_version_1(v1):
    v1.ok(["add", "generic", "-s", "plain.example", "-a", "me", "--password-stdin"], input="x", unset=v1.unset)
    assert header_version(v1.vault_path.read_bytes()) == 1


def test_adding_a_marked_item_converts_to_version_2_first(v1):
    v1.ok(["add", "generic", "-s", "local.example", "-a", "me", "--this-device-only", "--password-stdin"], input="x", unset=v1.unset)
    assert header_version(v1.vault_path.read_bytes()) == 2
    assert marked(v1) == {"github.com": False, "ftp.example.com": False, "local.example": True}
    assert v1.ok(["find", "generic", "-s", "local.example", "-w"], unset=v1.unset).stdout == "x\n"


def test_marking_an_item_converts_to_version_2_first(v1):
    v1.ok(["update", "generic", "-s", "github.com", "--set-this-device-only", "yes"], unset=v1.unset)
    assert header_version(v1.vault_path.read_bytes()) == 2
    assert marked(v1)["github.com"] is True
    assert v1.ok(["find", "internet", "-s", "ftp.example.com"], unset=v1.unset).stdout


def test_the_agent_asks_the_master_password_for_the_conversion(kc):
    """The agent forgot the master password: without a source (and no terminal) the marking add fails, the
    version-1 vault untouched; an unmarked add is served as before."""
    data = install_vector(kc, "valid-items")
    with_runtime_folder(kc)
    unlock(kc)
    try:
        result = kc.run(["add", "generic", "-s", "local.example", "-a", "me", "--this-device-only", "--password-stdin"],
                        input="x", unset=NO_SOURCE)
        assert_failure(result, "errSecInteractionNotAllowed")
        assert kc.vault_path.read_bytes() == data
        kc.ok(["add", "generic", "-s", "plain.example", "-a", "me", "--password-stdin"], input="x", unset=NO_SOURCE)
        assert header_version(kc.vault_path.read_bytes()) == 1
    finally:
        stop_agents(kc)
