"""The lab VM console reader: a guest whose kernel panicked is named with its fault report, a clean one is not."""

from __future__ import annotations

from pathlib import Path

from iogate.labs.labvm.console import EXCERPT_MAX_LINES, kernel_death, kernel_death_in

# The console of the guest that died in the gate's CI (2026-12-07): a double fault in the slab allocator
# under iSCSI load, 261 s after boot; 91 lines, the fault report from line 37 to the panic on line 90.
DOUBLE_FAULT = Path(__file__).resolve().parents[1] / "data" / "labvm" / "serial-double-fault.log"


def test_a_panicked_guest_is_named_from_its_fault_report_to_its_panic() -> None:
    death = kernel_death_in(DOUBLE_FAULT)
    assert death is not None
    lines = death.splitlines()
    assert lines[0] == "[  261.665718] traps: PANIC: double fault, error_code: 0x0"
    assert lines[-1] == "[  261.674382] Kernel panic - not syncing: Fatal exception in interrupt"
    assert len(lines) == 54  # console lines 37..90
    assert any("iscsi_xmitworker+0x11b/0x350 [libiscsi]" in line for line in lines)


def test_a_guest_that_did_not_panic_has_no_death() -> None:
    console = DOUBLE_FAULT.read_text(errors="replace").splitlines()[:36]  # everything before the fault
    assert kernel_death("\n".join(console)) is None
    assert kernel_death("") is None


def test_a_missing_console_is_no_death(tmp_path: Path) -> None:
    assert kernel_death_in(tmp_path / "serial.log") is None


def test_a_panic_without_a_fault_report_gives_the_ten_lines_before_it() -> None:
    console = [f"[   {i}.000000] line {i}" for i in range(30)] + ["[   30.000000] Kernel panic - not syncing: hung_task: blocked tasks"]
    lines = kernel_death("\n".join(console)).splitlines()  # type: ignore[union-attr]
    assert lines[0] == "[   20.000000] line 20"
    assert len(lines) == 11


def test_a_long_report_keeps_its_head_and_its_panic_line() -> None:
    console = ["[    1.000000] BUG: unable to handle page fault"] + [f"[    1.000000] frame {i}" for i in range(100)]
    console.append("[    2.000000] Kernel panic - not syncing: Fatal exception")
    lines = kernel_death("\n".join(console)).splitlines()  # type: ignore[union-attr]
    assert len(lines) == EXCERPT_MAX_LINES == 60
    assert lines[0] == "[    1.000000] BUG: unable to handle page fault"
    assert lines[-2] == "[... 43 lines ...]"  # 102 lines, 58 + the panic kept
    assert lines[-1].endswith("Kernel panic - not syncing: Fatal exception")
