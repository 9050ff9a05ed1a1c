"""Defect categories: a failed verdict (product) vs broken infrastructure.

The split a reviewer needs first: did the *array* miss a bound, or did the *lab*
(provisioning, a host, the connection, fio) break so no verdict exists?

- Product defect: the test failed with an AssertionError whose message starts
  with "verdict failed:" (what the criteria layer raises).
- Nothing judged: a test that measured and then had no check to judge it by
  ("verdict failed: nothing judged: ...": a spec gap, not an array miss); its
  own category, ahead of the product rule whose prefix it shares.
- Measurement invalid: verdicts judged on a saturated load generator and no
  failure that stands (plugins/verdicts.py MeasurementInvalid, Allure: broken,
  "measurement invalid: generator saturated: ..."): neither the array nor the
  lab broke; the initiator was too busy to measure. Ahead of infrastructure.
- Infrastructure: any iogate.errors.IOGateError subclass (ArrayError, HostError,
  EngineError, GuardRefused, LabFileError ...) or a transport error named in the
  message or the trace.

Rules are written twice from one definition: as allure-results/categories.json
(read by Allure 2 and by Allure 3's classic/allure2 plugins) and as the
`categories` of the Allure 3 config (read by the default "awesome" plugin).
Regexes are written so they mean the same under Java's full-match `matches()`
and JavaScript's `RegExp.test()` search: `[\\s\\S]*` instead of `.*` (messages are
multi-line) and explicit `^` anchors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from iogate import errors

PRODUCT_DEFECT = "Product defect: verdict failed"
INFRASTRUCTURE = "Infrastructure broken: lab, host, array API or engine"
NOTHING_JUDGED = "Nothing judged: the spec has no check for what the test measured"
MEASUREMENT_INVALID = "Measurement invalid: load generator saturated"
VERDICT_PREFIX = "verdict failed:"
NOTHING_JUDGED_PREFIX = "verdict failed: nothing judged:"
INVALID_PREFIX = "measurement invalid:"

# Errors from the transport layers under IOGate that mean "the lab broke", even
# when they escape without being wrapped in an IOGateError.
_TRANSPORT_ERRORS = (
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "BrokenPipeError",
    "TimeoutExpired",
    "CalledProcessError",
    "SSHException",
    "NoValidConnectionsError",
)


def infrastructure_error_names() -> list[str]:
    """IOGateError and every subclass (found at call time, so new ones count), then transport errors."""
    names: list[str] = []
    pending: list[type] = [errors.IOGateError]
    while pending:
        cls = pending.pop(0)
        if cls.__name__ not in names:
            names.append(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names + [n for n in _TRANSPORT_ERRORS if n not in names]


def _product_message_regex() -> str:
    # allure-pytest records the message as "AssertionError: <text>\n<assert repr>".
    return rf"^(AssertionError: )?{re.escape(VERDICT_PREFIX)}[\s\S]*"


def _nothing_judged_regex() -> str:
    return rf"^(AssertionError: )?{re.escape(NOTHING_JUDGED_PREFIX)}[\s\S]*"


def _invalid_message_regex() -> str:
    # Not an AssertionError: allure-pytest names the class module-qualified ("plugins.verdicts.MeasurementInvalid: ...").
    return rf"^([\w.]*MeasurementInvalid: )?{re.escape(INVALID_PREFIX)}[\s\S]*"


def _infrastructure_regex() -> str:
    alternatives = "|".join(re.escape(n) for n in infrastructure_error_names())
    # Subclasses defined in modules not imported when the report is built (a separate process)
    # still show module-qualified in the message, e.g. "iogate.hosts.guard.GuardRefused: ...".
    qualified = r"iogate(\.\w+)+(Error|Refused)"
    return rf"[\s\S]*\b({alternatives}|{qualified})\b[\s\S]*"


def category_rules() -> list[dict[str, Any]]:
    """Allure 2 categories.json entries; first match wins, so nothing judged comes before the product rule and
    measurement invalid before infrastructure."""
    infrastructure = _infrastructure_regex()
    return [
        {"name": NOTHING_JUDGED, "matchedStatuses": ["failed"], "messageRegex": _nothing_judged_regex()},
        {
            "name": PRODUCT_DEFECT,
            "matchedStatuses": ["failed"],
            "messageRegex": _product_message_regex(),
        },
        {"name": MEASUREMENT_INVALID, "matchedStatuses": ["broken"], "messageRegex": _invalid_message_regex()},
        {"name": INFRASTRUCTURE, "matchedStatuses": ["broken", "failed"], "messageRegex": infrastructure},
        # Same category, second rule: the error class may only be named in the trace.
        {"name": INFRASTRUCTURE, "matchedStatuses": ["broken", "failed"], "traceRegex": infrastructure},
    ]


def allure3_categories() -> list[dict[str, Any]]:
    """The same rules for the Allure 3 config: one category, several OR-ed matchers."""
    infrastructure = _infrastructure_regex()
    return [
        {"id": "iogate-nothing-judged", "name": NOTHING_JUDGED, "expand": True,
         "matchers": [{"statuses": ["failed"], "message": _nothing_judged_regex()}]},
        {"id": "iogate-product", "name": PRODUCT_DEFECT, "expand": True,
         "matchers": [{"statuses": ["failed"], "message": _product_message_regex()}]},
        {"id": "iogate-measurement-invalid", "name": MEASUREMENT_INVALID, "expand": True,
         "matchers": [{"statuses": ["broken"], "message": _invalid_message_regex()}]},
        {"id": "iogate-infrastructure", "name": INFRASTRUCTURE, "expand": True,
         "matchers": [{"statuses": ["broken", "failed"], "message": infrastructure},
                      {"statuses": ["broken", "failed"], "trace": infrastructure}]},
    ]


def classify(status: str, message: str, trace: str = "") -> str | None:
    """Which category a result lands in, evaluated the way Allure 3 does (first rule wins, regex search)."""
    for category in allure3_categories():
        for matcher in category["matchers"]:
            if status not in matcher["statuses"]:
                continue
            if "message" in matcher and not re.search(matcher["message"], message):
                continue
            if "trace" in matcher and not re.search(matcher["trace"], trace):
                continue
            return str(category["name"])
    return None


def write_categories(results_dir: Path | str) -> Path:
    """Write allure-results/categories.json; returns its path."""
    path = Path(results_dir) / "categories.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(category_rules(), indent=2) + "\n", encoding="utf-8")
    return path
