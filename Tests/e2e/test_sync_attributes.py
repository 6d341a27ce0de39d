"""kc's merge driver is named in each sync copy's `.git/info/attributes`, which git reads before
any `.gitattributes` and never pushes, with every attribute that changes a file's bytes unset: a
remote commit changing the committed `.gitattributes` cannot take the vault file away from kc's
driver (the fixtures of test_sync.py; test_sync_git_isolation.py has the other attributes)."""
from test_sync import git, pair, remote, secret, sync_folder  # noqa: F401  (pytest fixtures)

LINE = ("* -text -crlf -eol -ident -filter -working-tree-encoding -diff\n"
        "*.kc merge=kc -text -crlf -eol -ident -filter -working-tree-encoding -diff delta\n")


def test_setup_writes_the_attribute_to_info_attributes(pair):
    laptop, desktop = pair
    for kc in (laptop, desktop):   # sync init and sync clone
        assert (sync_folder(kc) / ".git" / "info" / "attributes").read_text().endswith(LINE)
    info = sync_folder(laptop) / ".git" / "info" / "attributes"
    info.write_text("# mine\n")
    laptop.ok(["sync", "init", "--repair"], unset=("KC_MASTER_PASSWORD_FILE",))
    assert info.read_text() == "# mine\n" + LINE, "the user's own lines are kept"


def test_a_remote_commit_changing_gitattributes_does_not_change_the_driver(pair):
    laptop, desktop = pair
    folder = sync_folder(desktop)
    (folder / ".gitattributes").write_text("*.kc -merge\n")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-am", "binary")
    git(folder, "push", "-q", "origin", "main")
    (sync_folder(laptop) / ".git" / "info" / "attributes").unlink(missing_ok=True)   # a sync copy made before kc wrote it
    laptop.add_generic("from-laptop", "me", "pw1")
    desktop.add_generic("from-desktop", "me", "pw2")
    laptop.ok(["sync"])
    assert (sync_folder(laptop) / ".git" / "info" / "attributes").read_text().endswith(LINE)
    assert "received: 1 added" in desktop.ok(["sync"]).stdout, "both sides changed the vault: kc's driver merged it"
    laptop.add_generic("again-laptop", "me", "pw3")
    desktop.add_generic("again-desktop", "me", "pw4")
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    expected = {"shared": "pw0", "from-laptop": "pw1", "from-desktop": "pw2", "again-laptop": "pw3", "again-desktop": "pw4"}
    for kc in (laptop, desktop):
        assert {service: secret(kc, service) for service in expected} == expected
    assert (folder / ".gitattributes").read_text() == "*.kc -merge\n", "the committed file is the remote's business"
