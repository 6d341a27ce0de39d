"""The packages `make deb` and `make dist` build, installed as a user without Swift would install them.

Each is installed into a fresh root: a folder holding only the files of the packages the .deb's
Depends names and what those depend on in turn (copied from this machine's Debian 12 dpkg database,
no /opt, no Swift), with a dpkg database listing just those packages, so `dpkg --root -i` checks
that Depends is satisfiable and complete. kc then runs inside that root (chroot, in a private mount
namespace holding the host's /dev and /proc and the test's home at its own path): `kc --version`,
`kc init`, `kc add`, `kc find -w`, and git-credential-kc and the `security` link. lintian checks the
.deb; Tests/packaging/check-binary.sh checks the binaries (no RUNPATH, glibc <= 2.36).
`make e2e-test` builds the packages and sets KC_PACKAGES to their folder."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kcharness import KC, REPO

CHECK_BINARY = REPO / "Tests" / "packaging" / "check-binary.sh"
LOADER = "/lib64/ld-linux-x86-64.so.2"
PLAIN_PATH = "/usr/bin:/bin"
# Runs "$@" chrooted into $1 in a private mount namespace, with the host's /dev and /proc and the
# folder $2 (the test's home, outside the root) bound at its own path inside.
ENTER_ROOT = """set -e
root=$1 home=$2; shift 2
{mount} --rbind /dev "$root/dev"
{mount} --rbind /proc "$root/proc"
mkdir -p "$root$home"
{mount} --bind "$home" "$root$home"
exec {chroot} "$root" "$@"
"""


def tool(name: str) -> str:
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    assert found, f"{name} is missing (make test-deps installs it)"
    return found


def as_root() -> list[str]:
    """Nothing as root; otherwise a user namespace where this user is root (for dpkg, mount, chroot)."""
    return [] if os.geteuid() == 0 else [tool("unshare"), "--map-root-user"]


def enter_root(root: Path, home: Path) -> list[str]:
    """The command prefix that runs a program inside `root` (see ENTER_ROOT)."""
    unshare = [tool("unshare"), "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare.insert(1, "--map-root-user")
    script = ENTER_ROOT.format(mount=tool("mount"), chroot=tool("chroot"))
    return [*unshare, "--", "/bin/sh", "-c", script, "sh", str(root), str(home)]


class RootKC(KC):
    """kc installed in a fresh root, run inside it with a plain PATH (no Swift) through the harness."""

    def __init__(self, root: Path, binary: str, home: Path):
        super().__init__(binary, home)
        self.root = root
        self.env["PATH"] = PLAIN_PATH
        self.env.pop("LD_LIBRARY_PATH", None)

    def command(self, args, wrapper=()) -> list[str]:
        return [*map(str, wrapper), *enter_root(self.root, self.home), self.binary, *map(str, args)]

    def inside(self, *command: str, input: str | None = None) -> subprocess.CompletedProcess:
        """Any program of the root, run inside it."""
        return subprocess.run([*enter_root(self.root, self.home), *command], input=input, capture_output=True,
                              text=True, env={"PATH": PLAIN_PATH, "LANG": "C.UTF-8"}, timeout=60)


def packages_dir() -> Path:
    folder = os.environ.get("KC_PACKAGES")
    if not folder:
        pytest.skip("KC_PACKAGES is not set (make e2e-test builds the packages with make deb and make dist)")
    return Path(folder)


def only(pattern: str) -> Path:
    found = sorted(packages_dir().glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {packages_dir()}, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def deb() -> Path:
    return only("kc_*.deb")


@pytest.fixture(scope="module")
def tarball() -> Path:
    return only("kc-*-linux-*.tar.gz")


def deb_field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()


def installed_packages() -> dict[str, dict]:
    """This machine's installed packages: name -> Depends and Pre-Depends (text) and what it Provides."""
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Pre-Depends}, ${Depends}\t${Provides}\n"],
                         capture_output=True, text=True, check=True).stdout
    packages = {}
    for line in out.splitlines():
        name, status, depends, provides = line.split("\t")
        if status.startswith("ii"):
            packages[name] = {"depends": depends, "provides": [p.split()[0] for p in provides.split(",") if p.strip()]}
    return packages


def closure(depends: str) -> set[str]:
    """The installed packages that satisfy `depends` (a Depends field), and theirs, recursively.
    Fails when a dependency is not installed here: the root could not be made."""
    packages = installed_packages()
    providers: dict[str, str] = {}
    for name, package in packages.items():
        providers.setdefault(name, name)
        for virtual in package["provides"]:
            providers.setdefault(virtual, name)
    wanted, pending = set(), [depends]
    while pending:
        for group in pending.pop().split(","):
            if not group.strip():
                continue
            names = [re.sub(r"\s*\(.*\)|:\w+", "", alternative).strip() for alternative in group.split("|")]
            chosen = next((providers[n] for n in names if n in providers), None)
            assert chosen, f"no installed package satisfies '{group.strip()}'"
            if chosen not in wanted:
                wanted.add(chosen)
                pending.append(packages[chosen]["depends"])
    return wanted


def make_root(root: Path, packages: set[str]):
    """A root holding only `packages`' files (as this machine has them) and a dpkg database of them."""
    for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        (root / target).mkdir(parents=True, exist_ok=True)
        (root / link).symlink_to(target)
    for folder in ("dev", "proc", "tmp", "etc", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    os.chmod(root / "tmp", 0o1777)
    listed = subprocess.run(["dpkg-query", "-L", *sorted(packages)], capture_output=True, text=True, check=True).stdout
    for path in listed.splitlines():
        if not path.startswith("/") or os.path.isdir(path) and not os.path.islink(path):
            continue
        if not os.path.lexists(path):
            continue  # a file the admin removed (e.g. docs excluded by dpkg's path-exclude)
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(target):
            shutil.copy2(path, target, follow_symlinks=False)
    status = subprocess.run(["dpkg-query", "-s", *sorted(packages)], capture_output=True, text=True, check=True).stdout
    (root / "var/lib/dpkg/status").write_text(status)
    (root / "var/lib/dpkg/available").write_text("")
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")


def loader_list(kc: RootKC, path: str) -> str:
    """What the root's own dynamic loader resolves for `path` (as ldd does), inside the root."""
    listed = kc.inside(LOADER, "--list", path)
    assert listed.returncode == 0, listed
    return listed.stdout


def check_kc_runs(kc: RootKC, bindir: str, version: str):
    """kc --version, init, add, find -w and get; git-credential-kc; all inside the root."""
    assert kc.ok(["--version"]).stdout == f"kc {version}\n"
    kc.init()
    kc.add_generic("svc", "me", "s3cret")
    assert kc.ok(["find", "generic", "-s", "svc", "-w"]).stdout == "s3cret\n"
    assert kc.ok(["get", "svc"]).stdout == "s3cret\n"
    kc.add_internet("git.example.com", "deploy", "pushed secret", "-r", "https")
    credential = RootKC(kc.root, f"{bindir}/git-credential-kc", kc.home)
    answer = credential.ok(["get"], input="protocol=https\nhost=git.example.com\n\n").stdout
    assert "username=deploy\n" in answer and "password=pushed secret\n" in answer, answer
    resolved = loader_list(kc, kc.binary)
    assert "not found" not in resolved and "libswift" not in resolved and "/opt/" not in resolved, resolved
    curl = loader_list(kc, "/usr/lib/x86_64-linux-gnu/libcurl.so.4")
    assert "not found" not in curl, curl


def kc_version() -> str:
    return subprocess.run([os.environ.get("KC_RELEASE_BIN") or str(REPO / ".build/release/kc"), "--version"],
                          capture_output=True, text=True, check=True).stdout.split()[1]


def test_deb_installs_into_a_fresh_root_and_runs_without_swift(deb, tmp_path):
    depends = deb_field(deb, "Depends")
    root = tmp_path / "root"
    make_root(root, closure(depends))
    assert not (root / "opt").exists()
    installed = subprocess.run([*as_root(), tool("dpkg"), "--root", str(root), "--log", "/dev/null",
                                "-i", str(deb)], capture_output=True, text=True, env={"PATH": PLAIN_PATH + ":/usr/sbin:/sbin"})
    assert installed.returncode == 0, installed
    for path in ("usr/bin/kc", "usr/share/man/man1/kc.1.gz", "usr/share/bash-completion/completions/kc",
                 "usr/share/zsh/vendor-completions/_kc", "usr/share/fish/vendor_completions.d/kc.fish",
                 "usr/share/doc/kc/copyright", "usr/share/doc/kc/changelog.gz", "usr/lib/systemd/user/kc-agent.service"):
        assert (root / path).is_file(), path
    assert os.readlink(root / "usr/bin/git-credential-kc") == "kc"
    assert (root / "usr/lib/kc/security-compat/security").resolve() == root / "usr/bin/kc"
    assert not (root / "usr/bin/security").exists(), "the security link is kept off PATH"

    kc = RootKC(root, "/usr/bin/kc", tmp_path / "home")
    check_kc_runs(kc, "/usr/bin", kc_version())
    security = RootKC(root, "/usr/lib/kc/security-compat/security", kc.home)
    assert security.ok(["find-generic-password", "-s", "svc", "-w"]).stdout == "s3cret\n"
    assert "/usr/bin/kc agent --foreground" in (root / "usr/lib/systemd/user/kc-agent.service").read_text()


def test_deb_depends_names_each_library_kc_needs(deb, tmp_path):
    """Depends comes from the binary: every NEEDED library's package is named (libc6 with the
    version the symbols need), libcurl4 and libssl3 (loaded with dlopen), and nothing of Swift."""
    depends = deb_field(deb, "Depends")
    names = {re.sub(r"\s*\(.*\)", "", group).strip() for group in depends.split(",")}
    assert {"libc6", "libsodium23", "libcurl4", "libssl3"} <= names, depends
    assert re.search(r"libc6 \(>= 2\.\d+\)", depends), depends
    assert not any("swift" in name or name.startswith("libstdc++") for name in names), depends
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path / "x")], check=True)
    dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "x/usr/bin/kc")], capture_output=True, text=True,
                             check=True).stdout
    for soname in re.findall(r"\(NEEDED\).*\[(.+)\]", dynamic):
        owner = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True, check=True).stdout
        packages = {line.split(":")[0] for line in owner.splitlines()}
        assert packages & names, f"{soname} ({packages}) is not in Depends: {depends}"


def test_lintian_reports_no_error(deb):
    result = subprocess.run([tool("lintian"), "--fail-on", "error", "--tag-display-limit", "0", str(deb)],
                            capture_output=True, text=True, timeout=300)
    print(result.stdout)
    errors = [line for line in result.stdout.splitlines() if line.startswith("E: ")]
    assert result.returncode == 0 and not errors, result.stdout + result.stderr


def test_tarball_installs_into_a_folder_and_runs_without_swift(deb, tarball, tmp_path):
    top = unpack(tarball, tmp_path / "unpacked")
    # Outside any root, on this machine with /opt/swift: nothing of Swift is loaded.
    ldd = subprocess.run(["ldd", str(top / "bin/kc")], capture_output=True, text=True, env={"PATH": PLAIN_PATH})
    assert ldd.returncode == 0 and "libswift" not in ldd.stdout and "/opt/" not in ldd.stdout, ldd.stdout

    root = tmp_path / "root"
    make_root(root, closure(deb_field(deb, "Depends")))
    installed = subprocess.run([str(top / "install.sh")], capture_output=True, text=True,
                               env={"PATH": PLAIN_PATH, "DESTDIR": str(root), "PREFIX": "/usr/local"})
    assert installed.returncode == 0, installed
    for path in ("bin/kc", "share/man/man1/kc.1", "share/bash-completion/completions/kc",
                 "share/zsh/site-functions/_kc", "share/fish/vendor_completions.d/kc.fish"):
        assert (root / "usr/local" / path).is_file(), path
    assert os.readlink(root / "usr/local/bin/git-credential-kc") == "kc"
    assert os.readlink(root / "usr/local/lib/kc/security-compat/security") == "/usr/local/bin/kc"
    check_kc_runs(RootKC(root, "/usr/local/bin/kc", tmp_path / "home"), "/usr/local/bin", kc_version())


def unpack(tarball: Path, folder: Path) -> Path:
    """The tarball unpacked into `folder` (by tar, as a user would): its one top folder."""
    folder.mkdir()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(folder)], check=True)
    (top,) = folder.iterdir()
    return top


def check_binary(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(CHECK_BINARY), str(binary), *args], capture_output=True, text=True)


def test_shipped_binaries_pass_check_binary(deb, tarball, tmp_path):
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path / "x")], check=True)
    top = unpack(tarball, tmp_path / "t")
    release = os.environ.get("KC_RELEASE_BIN") or str(REPO / ".build/release/kc")
    for binary in (tmp_path / "x/usr/bin/kc", top / "bin/kc", release):
        checked = check_binary(binary)
        assert checked.returncode == 0, checked
        assert "no RUNPATH, glibc <= 2.36" in checked.stdout, checked


CHECK_REFUSED = 1   # check-binary.sh's status for a binary it refuses (not a kc exit status)


def test_check_binary_refuses_a_runpath_and_a_newer_glibc(kc_bin, deb, tmp_path):
    """The check can fail: the debug build keeps SwiftPM's RUNPATH $ORIGIN, and the packaged
    binary needs a newer glibc than 2.2.5."""
    debug = check_binary(kc_bin)
    assert debug.returncode == CHECK_REFUSED and "has a search path: [$ORIGIN]" in debug.stderr, debug
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path / "x")], check=True)
    old = check_binary(tmp_path / "x/usr/bin/kc", "2.2.5")
    assert old.returncode == CHECK_REFUSED and "needs glibc symbols newer than 2.2.5: GLIBC_2." in old.stderr, old
