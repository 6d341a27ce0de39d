"""Shared fixtures for kc's end-to-end tests: `kc_bin`, `kc` (a fresh home), `kc_ready` (with a vault)."""
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kcharness import KC, KC_BIN  # noqa: E402


@pytest.fixture(scope="session")
def kc_bin() -> str:
    """The kc binary under test: $KC_BIN, else the debug build; missing is a failure, not a skip."""
    if not os.access(KC_BIN, os.X_OK):
        pytest.fail(f"kc binary not found at {KC_BIN}: build it (swift build) or set KC_BIN")
    return KC_BIN


@pytest.fixture
def kc(kc_bin, tmp_path) -> KC:
    """kc in a fresh temporary HOME, with a master password file; no vault yet."""
    return KC(kc_bin, tmp_path / "home")


@pytest.fixture
def kc_ready(kc) -> KC:
    """kc with an initialised vault (fast test KDF)."""
    kc.init()
    return kc
