"""The harness's own helpers against the sources of truth: the format helpers (kcformat.py) against
the committed test vectors, the exit-code names (kcharness.py) against KeychainStatus."""
import os
from collections import Counter
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kcformat import (FRAME_LENGTH, HEADER_LENGTH, REPO, crc32c, frames, header_checksum_ok, header_kdf,
                      patch_header, renumber, vectors)
from kcformat import records as read_records
from kcharness import EXIT_BY_NAME

VECTORS = vectors()
KDF_LINE = re.compile(r"^argon2id ops=(\d+) memory=(\d+)$")


def test_vectors_are_there():
    names = {v.name for v in VECTORS}
    assert len(VECTORS) >= 60 and {"valid-items", "header-checksum", "record-frame-checksum"} <= names


@pytest.mark.parametrize("vector", [v for v in VECTORS if v.fields["expect"] in ("success", "truncated")],
                         ids=lambda v: v.name)
def test_format_helpers_read_every_vault_vector(vector):
    """The header checksum, KDF fields and frames as kc wrote them; renumbering a record to its own
    sequence number and re-patching the header with its own KDF values reproduce kc's bytes."""
    torn = re.search(r"torn-tail offset=(\d+)", vector.fields.get("warning", ""))
    data = vector.data[:int(torn.group(1))] if torn else vector.data  # the whole records
    assert header_checksum_ok(data)
    ops, memory = map(int, KDF_LINE.match(vector.fields["kdf"]).groups())
    assert header_kdf(data) == (ops, memory)
    assert patch_header(data, ops=ops, memory=memory) == data
    records = frames(data)
    held = Counter(f.offset for f, _ in read_records(data, vector.fields["password"].encode()))  # a page holds several
    assert sum(held.values()) == int(vector.fields["records"])
    assert [f.sequence for f in records] == [1 + sum(held[g.offset] for g in records[:i]) for i in range(len(records))]
    assert all(f.end - f.offset >= FRAME_LENGTH for f in records)
    assert (records[-1].end if records else HEADER_LENGTH) == len(data)
    for f in records:
        assert renumber(data[f.offset:f.end], f.sequence) == data[f.offset:f.end]


def test_format_helpers_see_the_damage_vectors_describe():
    """A control: the helpers tell a bad header checksum and a bad frame checksum from good ones."""
    by_name = {v.name: v for v in VECTORS}
    assert not header_checksum_ok(by_name["header-checksum"].data)
    with pytest.raises(AssertionError, match="bad frame checksum"):
        frames(by_name["record-frame-checksum"].data)
    data = by_name["valid-items"].data
    second = frames(data)[1]
    assert renumber(data[second.offset:second.end], 7) != data[second.offset:second.end]
    assert crc32c(b"") == 0 and crc32c(b"123456789") == 0xE3069283


def test_exit_code_names_match_keychain_status():
    """Every named exit status is the low byte of its KeychainStatus code (errSecParam exits 2)."""
    sources = "\n".join(p.read_text() for p in (REPO / "Sources").rglob("*.swift"))
    cases = dict(re.findall(r"case (\w+) = (-\d+)", sources[sources.index("enum KeychainStatus"):]))
    names = dict(re.findall(r'case \.(\w+): return "(errSec\w+)"', sources))
    assert len(cases) >= 13
    for case, code in cases.items():
        name = names[case]
        expected = 2 if name == "errSecParam" else int(code) & 0xFF
        assert EXIT_BY_NAME.get(name) == expected, (name, code)


THREAD_TEST = """
import threading

def test_worker_raises():
    t = threading.Thread(target=lambda: 1 / 0)
    t.start()
    t.join()
"""


def test_an_exception_in_a_worker_thread_fails_the_test(tmp_path):
    """With this suite's pytest.ini an unhandled exception in a thread is an error; without it
    (the control) pytest only warns and the test passes."""
    (tmp_path / "test_thread.py").write_text(THREAD_TEST)
    ini = Path(__file__).resolve().parent / "pytest.ini"
    def pytest_with(config):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(config),
                               "--rootdir", str(tmp_path), str(tmp_path / "test_thread.py")],
                              capture_output=True, text=True, timeout=120)
    control = pytest_with(os.devnull)
    assert control.returncode == 0 and "1 passed" in control.stdout, control.stdout
    strict = pytest_with(ini)
    assert strict.returncode != 0 and "ZeroDivisionError" in strict.stdout, strict.stdout


def test_summary_catches_every_failure_it_must():
    """Tests/summary.py's rules on sample summaries: a failed or missing runner, a failed test, an
    unexpected skip, an xfail without its reason, a missing, unbuilt, crashed or idle fuzz target each
    fail the run (and passing summaries pass)."""
    summary = REPO / "Tests" / "summary.py"
    result = subprocess.run([sys.executable, str(summary), "--self-test"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "every rule caught its failure" in result.stdout, result.stdout + result.stderr


BARE_EXIT = re.compile(r"(returncode|exitstatus|status|rc)\s*[=!]=\s*[1-9]\d*\b(?!\.)|assert_failure\(.*\"errSec\w+\",\s*\d+\)")


def test_exit_statuses_are_named_in_every_test():
    """Tests compare exit statuses with the EXIT_* names, never with bare numbers (0 aside)."""
    here = Path(__file__).resolve().parent
    bare = [f"{path.relative_to(here)}:{n}: {line.strip()}"
            for path in sorted(here.rglob("*.py")) if path.name not in ("kcharness.py", "test_harness.py")
            for n, line in enumerate(path.read_text().splitlines(), 1) if BARE_EXIT.search(line)]
    assert bare == [], "use the EXIT_* names of kcharness.py:\n" + "\n".join(bare)
    assert BARE_EXIT.search('assert r.returncode == 44') and BARE_EXIT.search('assert_failure(r, "errSecParam", 2)')
