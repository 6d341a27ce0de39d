"""The release binary (what `make install` installs) has no test-only fault seam: KC_FAULT, which
makes the debug build stop at an I/O step, and KC_FAULT_TRACE, which makes it record every file
operation, change nothing."""
import os

import pytest

from kcharness import KC, SEAM_EXIT


def release_binary() -> str:
    binary = os.environ.get("KC_RELEASE_BIN")
    if not binary:
        pytest.skip("KC_RELEASE_BIN is not set (make e2e-test sets it to the release build)")
    assert os.access(binary, os.X_OK), f"no release binary at {binary}"
    return binary


def test_release_binary_ignores_kc_fault(kc_bin, tmp_path):
    fault = "any:1:exit-before"
    # Control: the debug build under test stops at its first I/O step.
    debug = KC(kc_bin, tmp_path / "debug")
    assert debug.run(["init", "--kdf-ops", "1", "--kdf-memory", "8K"], fault=fault).returncode == SEAM_EXIT
    release = KC(release_binary(), tmp_path / "release")
    release.init(fault=fault)
    release.ok(["add", "generic", "-s", "svc", "--password-stdin"], input="s3cret", fault=fault)
    assert release.ok(["find", "generic", "-s", "svc", "-w"], fault=fault).stdout == "s3cret\n"
    assert b"KC_FAULT" not in open(release.binary, "rb").read(), "the release binary names the fault seam"


def test_release_binary_writes_no_trace(kc_bin, tmp_path):
    """KC_FAULT_TRACE (the debug build's record of every file operation) makes no file."""
    debug = KC(kc_bin, tmp_path / "debug")
    debug.init(env={"KC_FAULT_TRACE": str(tmp_path / "debug.trace")})
    assert "\nfsync\t" in (tmp_path / "debug.trace").read_text(), "control: the debug build traces"
    release = KC(release_binary(), tmp_path / "release")
    release.init(env={"KC_FAULT_TRACE": str(tmp_path / "release.trace")})
    release.ok(["add", "generic", "-s", "svc", "--password-stdin"], input="s3cret",
               env={"KC_FAULT_TRACE": str(tmp_path / "release.trace")})
    assert not (tmp_path / "release.trace").exists(), "the release binary wrote a trace"
