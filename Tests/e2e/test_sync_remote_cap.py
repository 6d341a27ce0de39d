"""A remote whose vault file is beyond the 256 MiB a merge reads (Docs/SYNC.md): `kc sync` refuses it with
the cap's words (errSecDecode), the live vault untouched, and nothing of it pushed back. kc asks git for the
blob's size before reading it, so such a file is never read whole."""
import subprocess

from kcharness import EXIT_DECODE, assert_failure
from test_sync import GIT_ENV, git, pair, remote, services  # noqa: F401  (pytest fixtures)

CAP = 256 << 20


def test_a_remote_vault_file_beyond_the_cap_is_refused(pair, remote, tmp_path):
    laptop, desktop = pair
    scratch = tmp_path / "scratch"
    subprocess.run(["git", "clone", "-q", str(remote), str(scratch)], check=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin"})
    with open(scratch / "login.kc", "r+b") as f:
        f.truncate(CAP + 1)   # sparse zeros: git stores them in a few hundred KiB
    git(scratch, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-am", "too large")
    git(scratch, "push", "-q", "origin", "HEAD:main")
    desktop.add_generic("from-desktop", "me", "d1")
    before = desktop.vault_path.read_bytes()
    result = desktop.run(["sync"])
    assert_failure(result, "errSecDecode", EXIT_DECODE)
    assert f"{CAP + 1} bytes, larger than the 256 MiB a merge reads" in result.stderr, result.stderr
    assert desktop.vault_path.read_bytes() == before
    assert git(remote, "log", "-1", "--format=%s", "main").strip() == "too large", "nothing pushed over it"
    assert services(desktop) == {"shared": "pw0", "from-desktop": "d1"}
