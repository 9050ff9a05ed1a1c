"""Error types. Each one names the resource it is about.

Two families matter for the report: a *product* failure is a verdict that did not
hold (see iogate.verdict); everything here is *infrastructure*: the lab, a host,
the array API or the harness itself broke, and no verdict about the array can be
drawn from the run.
"""


class IOGateError(Exception):
    """Base class: an infrastructure problem, never a product verdict.

    Its message is redacted when the error is made (iogate.lab.secrets): an error
    quoting a hook's command line or a URL never carries a resolved secret on to
    the terminal, junit, Allure or the results store."""

    def __init__(self, *args: object) -> None:
        from iogate.lab.secrets import redact

        super().__init__(*(redact(arg) if isinstance(arg, str) else arg for arg in args))


class LabFileError(IOGateError):
    """The lab (or criteria / workload) YAML is malformed; names file:line."""


class ArrayError(IOGateError):
    """The array driver or the array's API failed."""


class HostError(IOGateError):
    """An initiator host is unreachable or a command on it failed."""


class GuardRefused(IOGateError):
    """A workload was about to touch a device this run may not write."""


class EngineError(IOGateError):
    """The load generator (fio, vdbench) failed or produced unreadable output."""


class LedgerError(IOGateError):
    """The resource journal could not be written or read."""
