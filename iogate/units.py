"""Units: size strings as storage engineers write them ("4k", "1GiB") and back in fio's
short form; and the named conversions between the units IOGate stores and the ones it reports.

Stored figures are nanoseconds (latency) and bytes per second (bandwidth, fio's
`bw_bytes`); reports say milliseconds (or microseconds) and MB/s. "MB/s" in a
report (`mb_per_s`, `MB_per_s`) is decimal, 10**6 bytes per second; vdbench's own
MB/s column is binary, 2**20 bytes per second (`mib_per_s_to_bytes_per_s`).
"""

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


NS_PER_US = 1e3
NS_PER_MS = 1e6
US_PER_S = 1e6
BYTES_PER_MB = 1e6  # decimal megabyte: a report's MB/s
BYTES_PER_MIB = 1 << 20  # binary mebibyte: vdbench's MB/s


def ns_to_us(ns: float) -> float:
    """Nanoseconds to microseconds: 1500 ns -> 1.5 us."""
    return ns / NS_PER_US


def ns_to_ms(ns: float) -> float:
    """Nanoseconds to milliseconds: 2_500_000 ns -> 2.5 ms."""
    return ns / NS_PER_MS


def ms_to_ns(ms: float) -> float:
    """Milliseconds to nanoseconds: 0.25 ms -> 250_000 ns."""
    return ms * NS_PER_MS


def s_to_us(s: float) -> float:
    """Seconds to microseconds: 0.002 s -> 2000 us."""
    return s * US_PER_S


def bytes_per_s_to_mb_per_s(bytes_per_s: float) -> float:
    """Bytes per second to a report's (decimal) MB/s: 250_000_000 B/s -> 250 MB/s."""
    return bytes_per_s / BYTES_PER_MB


def mib_per_s_to_bytes_per_s(mib_per_s: float) -> float:
    """vdbench's (binary) MB/s to bytes per second: 1.5 MiB/s -> 1_572_864 B/s."""
    return mib_per_s * BYTES_PER_MIB
