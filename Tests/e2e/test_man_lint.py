"""The generated man page passes `mandoc -Tlint -W warning` without a word."""
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("mandoc") is None, reason="mandoc is not installed (make test-deps)")


def lint(page: Path) -> str:
    result = subprocess.run(["mandoc", "-Tlint", "-W", "warning", str(page)], capture_output=True, text=True)
    return result.stdout + result.stderr


def test_man_page_lints_clean(kc, tmp_path):
    page = tmp_path / "kc.1"
    page.write_text(kc.ok(["__man"]).stdout)
    assert lint(page) == ""
    assert lint(REPO / "Docs" / "kc.1") == ""


def test_lint_reports_a_warning(tmp_path):
    """Control: mandoc at this level does report what the generator used to write."""
    page = tmp_path / "bad.1"
    page.write_text('.TH KC 1 "" "kc" "User Commands"\n.SH NAME\nkc \\- x\n.SH DESCRIPTION\n.PP\nText.\n')
    report = lint(page)
    assert "missing date" in report and "skipping paragraph macro: PP after SH" in report
