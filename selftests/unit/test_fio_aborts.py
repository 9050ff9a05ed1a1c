"""fio's text-only aborts are recognised (the json of such a run says error 0)."""

from iogate.engines.fio.aborts import abort_message

MOUNTED = "fio: /dev/loop0 appears mounted, and 'allow_mounted_write' isn't set. Aborting."


def test_mounted_abort_found_in_stdout() -> None:
    assert abort_message(f"some status\n{MOUNTED}\n") == MOUNTED


def test_client_prefixed_abort_found() -> None:
    assert abort_message(f"<10.0.0.2> {MOUNTED}") == MOUNTED


def test_clean_output_has_no_abort() -> None:
    assert abort_message("fio: this platform does not support process shared mutexes\njobs: 1\n") is None
