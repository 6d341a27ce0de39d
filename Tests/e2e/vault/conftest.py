"""Fixtures for the vault tests; figures are printed in pytest's terminal summary."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vaultkit  # noqa: E402


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not vaultkit.FIGURES:
        return
    terminalreporter.section("kc vault figures" + (" — stress scale" if vaultkit.STRESS else " — CI scale"))
    for line in vaultkit.FIGURES:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session", autouse=True)
def _kc_binary(kc_bin):
    """Every vault test needs the binary (the shared `kc_bin` fails when it is missing)."""


@pytest.fixture
def vkc(tmp_path) -> vaultkit.Kc:
    """A private kc world (shared harness) with a fast-KDF vault already created."""
    k = vaultkit.Kc(tmp_path)
    k.create()
    return k


@pytest.fixture
def vworld(tmp_path) -> vaultkit.Kc:
    """A private kc world (shared harness) without a vault."""
    return vaultkit.Kc(tmp_path)
