"""kc sync without git on PATH: errSecNotAvailable, the status of every missing helper program
(gpg for import pass, a clipboard program for --clip, libcurl for ftp login), with a hint naming the
Debian package; nothing is written."""
from kcharness import EXIT_NOT_AVAILABLE, assert_failure


def test_without_git_sync_init_is_not_available(kc_ready, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["sync", "init", "--remote", tmp_path / "remote.git"], env={"PATH": str(empty)})
    assert_failure(result, "errSecNotAvailable", EXIT_NOT_AVAILABLE)
    assert "git is not installed (not found on PATH)" in result.stderr
    assert result.hint == "install git (Debian: apt-get install git)"
    assert kc_ready.vault_path.read_bytes() == before
    assert not (tmp_path / "remote.git").exists()
