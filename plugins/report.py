"""Report glue: Allure environment and categories for the session (product vs infrastructure)."""

from __future__ import annotations

import pytest


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Filled in by the report work (environment.properties, categories.json)."""
