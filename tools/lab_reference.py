"""Write docs/lab-reference.md and labs/lab.schema.json from the lab models (iogate/lab/reference.py).

    python tools/lab_reference.py          # write both files
    python tools/lab_reference.py --check  # exit 1 when a committed file differs or a field has no meaning
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iogate.lab import reference


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    missing = reference.missing_descriptions()
    for name in missing:
        print(f"no description: {name} (give it Field(description=...) or a comment on its line)", file=sys.stderr)
    outputs = {reference.MARKDOWN: reference.render_markdown(), reference.SCHEMA: reference.render_schema()}
    stale = [path for path, text in outputs.items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(reference.ROOT)} differs from the models: run python tools/lab_reference.py", file=sys.stderr)
        return 1 if stale or missing else 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path.relative_to(reference.ROOT)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
