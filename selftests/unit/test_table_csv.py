"""The CSV twin of a result table (iogate.report.table.table_csv)."""

from __future__ import annotations

import pytest

from iogate.report.table import table_csv


def test_rows_become_csv_with_the_first_rows_keys_as_header() -> None:
    rows = [{"point": "rd70-4k-t8", "iops": 1234.5, "note": ""}, {"point": "rd0-8k-t1", "iops": 7, "note": "a,b"}]
    assert table_csv(rows) == 'point,iops,note\r\nrd70-4k-t8,1234.5,\r\nrd0-8k-t1,7,"a,b"\r\n'


def test_no_rows_is_empty_text() -> None:
    assert table_csv([]) == ""


def test_a_row_with_a_column_the_first_lacks_is_refused() -> None:
    with pytest.raises(ValueError, match="fields not in fieldnames: 'b'"):
        table_csv([{"a": 1}, {"a": 2, "b": 3}])
