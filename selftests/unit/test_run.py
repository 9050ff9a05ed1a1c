"""Runs never share a directory (and so never a ledger)."""

from pathlib import Path

from iogate.run import Run


def test_two_runs_in_the_same_second_get_their_own_ledgers(tmp_path: Path) -> None:
    first, second = Run.start(tmp_path, "labvm"), Run.start(tmp_path, "labvm")
    assert first.run_dir != second.run_dir
    entry = first.ledger.intend("file", path="/nonexistent/a")
    second.ledger.intend("file", path="/nonexistent/b")
    second.ledger.released(second.ledger.entries[1])
    reloaded = type(first.ledger).load(first.ledger.path)[0]
    assert [e.attrs["path"] for e in reloaded.open_entries()] == ["/nonexistent/a"] and entry.open
