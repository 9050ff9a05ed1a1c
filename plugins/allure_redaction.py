"""Allure results and attachments are redacted as allure-pytest writes them, not only afterwards.

allure-pytest writes each result, container and attachment through one
AllureFileLogger registered with allure_commons' plugin manager. Its reporting
hooks are re-registered here through wrappers that redact first (iogate.lab.secrets),
so a session killed half-way has not left a secret in allure-results either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attr

from iogate.lab.secrets import redact


def _redact_item(item: Any) -> None:
    """Redact every string of an allure model object (result, container, step...) in place."""
    for field in attr.fields(type(item)):
        value = getattr(item, field.name)
        setattr(item, field.name, _redacted(value))


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if attr.has(type(value)):
        _redact_item(value)
    return value


def _redact_body(body: str | bytes) -> str | bytes:
    if isinstance(body, str):
        return redact(body)
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return body  # binary (a PNG): no text to hold a secret
    clean = redact(text)
    return clean.encode() if clean != text else body


def install() -> None:
    """Wrap the registered file logger's reporting hooks (idempotent; no-op without --alluredir)."""
    import allure_commons
    from allure_commons.logger import AllureFileLogger

    manager = allure_commons.plugin_manager
    for logger in manager.get_plugins():
        if not isinstance(logger, AllureFileLogger) or getattr(logger, "iogate_redacting", False):
            continue
        name = manager.get_name(logger)
        manager.unregister(logger)
        report_result, report_container = logger.report_result, logger.report_container
        report_data, report_file = logger.report_attached_data, logger.report_attached_file

        def result(result: Any, _write: Any = report_result) -> None:
            _redact_item(result)
            _write(result)

        def container(container: Any, _write: Any = report_container) -> None:
            _redact_item(container)
            _write(container)

        def data(body: str | bytes, file_name: str, _write: Any = report_data) -> None:
            _write(_redact_body(body), file_name)

        def file(source: str, file_name: str, _copy: Any = report_file, _write: Any = report_data) -> None:
            try:
                body = Path(source).read_bytes()
            except OSError:
                _copy(source, file_name)
                return
            clean = _redact_body(body)
            _copy(source, file_name) if clean is body else _write(clean, file_name)

        logger.report_result = allure_commons.hookimpl(result)
        logger.report_container = allure_commons.hookimpl(container)
        logger.report_attached_data = allure_commons.hookimpl(data)
        logger.report_attached_file = allure_commons.hookimpl(file)
        logger.iogate_redacting = True
        manager.register(logger, name=name)
