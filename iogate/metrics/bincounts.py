"""BinCounts: a compact, immutable, validated map of histogram bin index -> count (zeros left out).

One per-second fio hist log line holds ~10 occupied bins of 1856; as a dict
with Python int keys and values that is ~900 bytes, as BinCounts ~130 (one
bytes object: the counts' width, the counts as unsigned 32-bit integers, or
64-bit ones where some count needs it, then the indexes as unsigned 16-bit
ones, both in index order). An hour of 1 s lines from 100
hosts is 360,000 of them. Counts are exact integers (0 < count < 2**64, a larger one is
refused with ValueError, never rounded); a
merge is addition bin by bin (`sum_into` a dense list, then `from_dense`),
so merged percentiles equal those of fio's bins merged by addition.

The constructor checks nothing; the classmethods validate (an index in
0..size-1, a non-negative integer count), the `_trusted` ones are for
callers that built the counts themselves. Equality is the Mapping's: a
BinCounts equals a dict with the same non-zero items.

>>> counts = BinCounts.from_mapping({600: 3, 601: 9})
>>> counts[601], counts.total, dict(counts)
(9, 12, {600: 3, 601: 9})
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

_COUNT = "Q"  # unsigned 64-bit
_SMALL_COUNT = "I"  # unsigned 32-bit, when every count fits (a per-second line's always does)
_INDEX = "H"  # unsigned 16-bit
MAX_SIZE = 1 << 16  # indexes fit 16 bits (fio has 1856 bins, vdbench a few dozen buckets)
_EMPTY = b""


class BinCounts(Mapping[int, int]):
    """Non-zero counts by bin index, packed (module docstring)."""

    __slots__ = ("_packed",)

    def __init__(self, packed: bytes = _EMPTY) -> None:
        self._packed = packed

    # -- building --------------------------------------------------------------------------------

    @classmethod
    def _trusted(cls, indexes: Iterable[int], counts: Iterable[int]) -> BinCounts:
        """From ascending indexes and their (non-zero) counts, unchecked beyond what array() refuses."""
        values = counts if isinstance(counts, list) else list(counts)
        try:
            index_array = array(_INDEX, indexes)
            try:
                count_array = array(_SMALL_COUNT, values)
            except OverflowError:
                count_array = array(_COUNT, values)
        except OverflowError:
            raise ValueError(f"a bin count at or above 2**64 (or an index above {MAX_SIZE - 1}) cannot be held") from None
        if len(count_array) != len(index_array):
            raise ValueError(f"{len(count_array)} counts for {len(index_array)} bins")
        return cls(bytes((count_array.itemsize,)) + count_array.tobytes() + index_array.tobytes())

    @classmethod
    def from_dense(cls, dense: Iterable[int], size: int | None = None) -> BinCounts:
        """From every bin's count in index order (a hist log line, a merge's accumulator)."""
        indexes, counts = [], []
        for index, count in enumerate(dense):
            if count:
                if count < 0:
                    raise ValueError(f"bucket {index} has a negative count {count}")
                indexes.append(index)
                counts.append(count)
        if size is not None and indexes and indexes[-1] >= size:
            raise ValueError(f"bucket {indexes[-1]} out of range 0..{size - 1}")
        return cls._trusted(indexes, counts)

    @classmethod
    def from_mapping(cls, mapping: Mapping[Any, Any], size: int = MAX_SIZE) -> BinCounts:
        """From {index: count} in any order (zeros dropped); indexes and counts checked."""
        if isinstance(mapping, BinCounts):
            if mapping and mapping.last_index() >= size:
                raise ValueError(f"bucket {mapping.last_index()} out of range 0..{size - 1}")
            return mapping
        items = []
        for index, count in mapping.items():
            i, c = int(index), int(count)
            if not 0 <= i < size:
                raise ValueError(f"bucket {index} out of range 0..{size - 1}")
            if c < 0:
                raise ValueError(f"bucket {index} has a negative count {count}")
            if c:
                items.append((i, c))
        items.sort()
        for (a, _), (b, _) in itertools.pairwise(items):
            if a == b:
                raise ValueError(f"bucket {a} given twice")
        return cls._trusted((i for i, _ in items), (c for _, c in items))

    @classmethod
    def summed(cls, parts: Iterable[Mapping[int, int]], size: int) -> BinCounts:
        """Bin-by-bin sum of BinCounts (or validated mappings) of bins 0..size-1."""
        dense = [0] * size
        for part in parts:
            (part if isinstance(part, BinCounts) else cls.from_mapping(part, size)).sum_into(dense)
        return cls.from_dense(dense)

    # -- reading ---------------------------------------------------------------------------------

    def _split(self) -> tuple[memoryview, memoryview]:
        packed = self._packed
        if not packed:
            return memoryview(array(_COUNT)), memoryview(array(_INDEX))
        width = packed[0]
        n = (len(packed) - 1) // (width + 2)
        view = memoryview(packed)
        return view[1: 1 + width * n].cast(_SMALL_COUNT if width == 4 else _COUNT), view[1 + width * n:].cast(_INDEX)

    def indexes(self) -> memoryview:
        return self._split()[1]

    def counts(self) -> memoryview:
        return self._split()[0]

    def last_index(self) -> int:
        return self._split()[1][-1]

    def sum_into(self, dense: list[int]) -> None:
        """Add every count into dense[index] (dense is long enough: the caller's bin count)."""
        counts, indexes = self._split()
        for index, count in zip(indexes.tolist(), counts.tolist(), strict=True):  # lists: far faster to walk
            dense[index] += count

    @property
    def total(self) -> int:
        return sum(self._split()[0])

    def __getitem__(self, index: int) -> int:
        counts, indexes = self._split()
        at = bisect_left(indexes, index)
        if at < len(indexes) and indexes[at] == index:
            return int(counts[at])
        raise KeyError(index)

    def __iter__(self) -> Iterator[int]:
        return iter(self._split()[1].tolist())

    def __len__(self) -> int:
        return (len(self._packed) - 1) // (self._packed[0] + 2) if self._packed else 0

    def items(self) -> list[tuple[int, int]]:  # type: ignore[override]  # a list: Mapping's view would bisect per key
        counts, indexes = self._split()
        return list(zip(indexes.tolist(), counts.tolist(), strict=True))

    def values(self) -> list[int]:  # type: ignore[override]
        return self._split()[0].tolist()

    def keys(self) -> list[int]:  # type: ignore[override]
        return self._split()[1].tolist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BinCounts):
            return self._packed == other._packed
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._packed)

    def __repr__(self) -> str:
        return f"BinCounts({dict(self.items())})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (BinCounts, (self._packed,))
