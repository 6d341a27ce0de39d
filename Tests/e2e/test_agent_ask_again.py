"""Items with the require-password mark, enforced by the agent: revealing one needs the master
password sent with the request (checked by deriving the key again); finding it without its secret,
or other items, does not; setting or removing the mark needs it too."""
import pytest

import agentwire
from test_agent_process import running_agent

MARKED = agentwire.query("generic", service="bank")


@pytest.fixture
def marked(kc_ready):
    """The socket of an unlocked agent whose vault holds the marked item bank (secret "pin")."""
    with running_agent(kc_ready, unlocked=True) as (_, path):
        name, _ = agentwire.request(path, "add", agentwire.add_body("generic", b"pin", require_password=True, service="bank"))
        assert name == "items"
        yield path


def test_a_marked_secret_needs_the_master_password_again(kc_ready, marked):
    path = marked
    name, _ = agentwire.request(path, "add", agentwire.add_body("generic", b"plain", service="news"))
    assert name == "items"
    assert agentwire.request(path, "find", agentwire.find_body(MARKED))[0] == "passwordRequired"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, password="wrong"))
    assert name == "failure" and agentwire.decode(body)["status"] == "errSecAuthFailed"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, password=kc_ready.master_password))
    assert name == "items" and agentwire.first_secret(body) == b"pin"
    # Without its secret, or for another item, no password is needed.
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, revealing=False))
    assert name == "items" and agentwire.first_secret(body) == b""
    name, body = agentwire.request(path, "find", agentwire.find_body(agentwire.query("generic", service="news")))
    assert name == "items" and agentwire.first_secret(body) == b"plain"
    # Every item with secrets includes the marked one.
    assert agentwire.request(path, "allItems", agentwire.all_items_body(revealing=True))[0] == "passwordRequired"
    assert agentwire.request(path, "allItems", agentwire.all_items_body(revealing=False))[0] == "items"


def test_changing_the_mark_needs_the_master_password(kc_ready, marked):
    path = marked
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, require_password=False))[0] == "passwordRequired"
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, False, "wrong"))[0] == "failure"
    assert agentwire.request(path, "find", agentwire.find_body(MARKED))[0] == "passwordRequired", "the mark is still there"
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, False, kc_ready.master_password))[0] == "items"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED))
    assert name == "items" and agentwire.first_secret(body) == b"pin"


def test_a_password_changed_by_another_process_is_the_one_asked_for(kc_ready, marked):
    path = marked
    new_password = kc_ready.home / "new-password"
    kc_ready.write_secret_file(new_password, "a new password: orbit maple quartz\n")
    kc_ready.ok(["passwd", "--new-password-file", str(new_password)])
    assert agentwire.request(path, "find", agentwire.find_body(MARKED, password=kc_ready.master_password))[0] == "failure"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, password="a new password: orbit maple quartz"))
    assert name == "items" and agentwire.first_secret(body) == b"pin"


def test_replacing_or_deleting_a_marked_secret_needs_the_master_password(kc_ready, marked):
    path = marked
    right = kc_ready.master_password
    replace = dict(update_existing=True, service="bank")
    # add with update-existing replaces the secret: refused without the password or with a wrong one.
    assert agentwire.request(path, "add", agentwire.add_body("generic", b"new", **replace))[0] == "passwordRequired"
    assert agentwire.request(path, "add", agentwire.add_body("generic", b"new", password="wrong", **replace))[0] == "failure"
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, secret=b"newer"))[0] == "passwordRequired"
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, password="wrong", secret=b"newer"))[0] == "failure"
    assert agentwire.request(path, "delete", agentwire.delete_body(MARKED))[0] == "passwordRequired"
    assert agentwire.request(path, "delete", agentwire.delete_body(MARKED, "wrong"))[0] == "failure"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, password=right))
    assert name == "items" and agentwire.first_secret(body) == b"pin", "nothing was changed"
    # An update that keeps its secret and mark, or a write to an unmarked item, needs none.
    assert agentwire.request(path, "update", agentwire.update_body(MARKED))[0] == "items"
    assert agentwire.request(path, "add", agentwire.add_body("generic", b"x", update_existing=True, service="news"))[0] == "items"
    assert agentwire.request(path, "delete", agentwire.delete_body(agentwire.query("generic", service="news")))[0] == "items"
    # With the password, each goes through.
    assert agentwire.request(path, "add", agentwire.add_body("generic", b"new", password=right, **replace))[0] == "items"
    assert agentwire.request(path, "update", agentwire.update_body(MARKED, password=right, secret=b"newer"))[0] == "items"
    name, body = agentwire.request(path, "find", agentwire.find_body(MARKED, password=right))
    assert name == "items" and agentwire.first_secret(body) == b"newer"
    assert agentwire.request(path, "delete", agentwire.delete_body(MARKED, right))[0] == "items"
    assert agentwire.request(path, "find", agentwire.find_body(MARKED, revealing=False))[0] == "failure"
