"""Every relative link in README.md and docs/*.md leads somewhere: a file or directory that exists and,
when the link names a heading (`page.md#section`), a heading of that page with that anchor.

Anchors follow GitHub's rule (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2` ... for
repeats), so a link that works here works on the repository's web page. Links inside code (fenced
blocks, `inline`) are text, not links; links with a scheme (https:, mailto:) are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 150  # issue 27: the README is a front door; the rest lives in docs/

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _prose(text: str) -> str:
    """The text with code removed: fenced blocks, indented blocks (outside lists), code spans."""
    text = _FENCE.sub("", text)
    text = _indented_code_removed(text)
    return _CODE_SPAN.sub("", text)


def _indented_code_removed(text: str) -> str:
    """Indented lines that follow a blank line and do not continue a list item are code blocks."""
    out: list[str] = []
    in_code = False
    previous_blank = True
    in_list = False
    for line in text.splitlines():
        blank = not line.strip()
        if re.match(r"^\s{0,3}([-*+]|\d+[.)])\s", line):
            in_list = True
        elif not blank and not line.startswith((" ", "\t")):
            in_list = False
        starts_code = _INDENTED_CODE.match(line) is not None and previous_blank and not in_list
        in_code = (in_code and (blank or _INDENTED_CODE.match(line) is not None)) or starts_code
        out.append("" if in_code else line)
        previous_blank = blank
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: markup and punctuation dropped, lower case, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", markdown)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(markdown: str) -> list[str]:
    prose = _prose(markdown)
    targets = _INLINE_LINK.findall(prose) + _REFERENCE_DEF.findall(prose)
    return [t for t in targets if t and not _SCHEME.match(t)]


def dangling(page: Path) -> list[str]:
    """Each relative link of `page` that leads nowhere, as 'page: target: why'."""
    problems: list[str] = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path_part, _, fragment = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            problems.append(f"{page.name}: {target}: no file {destination}")
            continue
        if fragment and destination.is_file() and destination.suffix == ".md":
            if fragment not in anchors(destination.read_text(encoding="utf-8")):
                problems.append(f"{page.name}: {target}: {destination.name} has no heading with anchor #{fragment}")
    return problems


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    assert dangling(page) == []


def test_the_readme_links_into_docs() -> None:
    """The check is not vacuous: the front door's links are found (at least one per docs page it lists)."""
    links = relative_links((ROOT / "README.md").read_text(encoding="utf-8"))
    assert {"docs/labs.md", "docs/specs.md", "docs/safety.md", "docs/engines.md", "docs/reports.md",
            "docs/selftests.md", "docs/lab-reference.md", "docs/ARCHITECTURE.md"} <= set(links)


def test_readme_is_a_front_door() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "make accept" in text and "make check" in text


# -- the checker itself: each case worked by hand ----------------------------------------------------

def test_slug_follows_github() -> None:
    assert slug("Vendor arrays (ONTAP, FlashArray, PowerStore)") == "vendor-arrays-ontap-flasharray-powerstore"
    assert slug("The array's own counters") == "the-arrays-own-counters"
    assert slug("How to add ...") == "how-to-add-"
    assert slug("At behaviour depth (`make vendor-behaviour`)") == "at-behaviour-depth-make-vendor-behaviour"


def test_repeated_headings_are_numbered() -> None:
    assert anchors("# Notes\n\n## Notes\n\n### Other\n") == {"notes", "notes-1", "other"}


def test_a_missing_file_is_dangling(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("See [the guide](docs/guide.md) and [here](page.md).\n", encoding="utf-8")
    assert [p.split(": ")[1] for p in dangling(page)] == ["docs/guide.md"]


def test_a_missing_anchor_is_dangling(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## Real section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#real-section) [b](other.md#gone) [c](#local) [d](#missing)\n\n## Local\n",
                    encoding="utf-8")
    assert [p.split(": ")[1] for p in dangling(page)] == ["other.md#gone", "#missing"]


def test_code_and_urls_are_not_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text `[x](nowhere.md)` and [web](https://example.com/x.md) and [mail](mailto:a@b.c).\n\n"
        "```yaml\nkey: \"[y](nowhere2.md)\"\n```\n\n"
        "    [z](nowhere3.md)   an indented code block\n\n"
        "- a list item\n\n    [kept](missing-in-list.md)\n",
        encoding="utf-8",
    )
    assert [p.split(": ")[1] for p in dangling(page)] == ["missing-in-list.md"]


def test_reference_definitions_are_checked(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("See [guide][g].\n\n[g]: missing.md\n", encoding="utf-8")
    assert [p.split(": ")[1] for p in dangling(page)] == ["missing.md"]
