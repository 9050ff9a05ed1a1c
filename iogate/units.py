"""Size strings as storage engineers write them ("4k", "1GiB"), and back in fio's short form."""

import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size_bytes(value: str | int) -> int:
    """Parse "4k", "256KiB", "1g" or 4096 into bytes (binary multiples, as fio does).

    >>> parse_size_bytes("4k")
    4096
    """
    if isinstance(value, int):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"not a size: {value!r} (use e.g. 4k, 256KiB, 1GiB)")
    number, prefix, _ = match.groups()
    return int(float(number) * _FACTORS[prefix.lower()])


def format_size(num_bytes: int) -> str:
    """Shortest exact binary form: 4096 -> "4k", 1048576 -> "1m" (fio syntax)."""
    for suffix, factor in (("p", 1 << 50), ("t", 1 << 40), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if num_bytes >= factor and num_bytes % factor == 0:
            return f"{num_bytes // factor}{suffix}"
    return str(num_bytes)
