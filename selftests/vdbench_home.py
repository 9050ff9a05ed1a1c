"""Self-tests use the development vdbench (../shared/tools/vdbench) or VDBENCH_HOME; skip clearly without one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from iogate.engines.vdbench.locate import vdbench_home
from iogate.errors import EngineError


def require_vdbench() -> Path:
    try:
        home = vdbench_home()
    except EngineError as exc:
        pytest.skip(f"vdbench not available: {exc}")
    if shutil.which("java") is None:
        pytest.skip("vdbench needs a Java runtime >= 17 (apt-get install openjdk-17-jre-headless; `make setup` does it)")
    return home
