"""Where the tests find the source checkout they run from (config/, resources/, tools/, README.md)."""

import os
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
#: The installed ``hysem`` command of the environment the tests run in.
HYSEM = str(Path(sys.executable).with_name("hysem"))
#: Real third-party data for conformance tests, beside the checkout (never copied into it).
REALDATA = PROJECT_ROOT.parent / "shared" / "realdata"
#: Tests that read REALDATA skip on a workstation without it, and run (and fail) in CI.
needs_realdata = pytest.mark.skipif(
    not os.environ.get("CI") and not REALDATA.is_dir(), reason=f"real third-party data not found at {REALDATA}"
)
