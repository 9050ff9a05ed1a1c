"""What the published procedures share: strict catalog models, the data pattern, grid picking.

Each procedure's catalog (workloads/*.yaml) is validated with file:line errors
before any test runs. The run profile (smoke/quick/full) picks how much of each
grid runs; a profile file (--profile-file) may replace a grid under `grids:`
(keys sweep, kpi_parallelism, netapp).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from iogate.engines.workload import WorkloadSpec, parse_block_size
from iogate.errors import LabFileError
from iogate.lab.profiles import Profile
from iogate.lab.yamlfile import load_model
from iogate.units import parse_size_bytes

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"


def _size(value: str) -> str:
    parse_size_bytes(value)
    return value


def _block_size(value: str) -> str:
    parse_block_size(value)
    return value


Pct = Annotated[int, Field(ge=0, le=100)]
SizeStr = Annotated[str, AfterValidator(_size)]
# A block size or a mix ("4k/50:64k/50"), checked at load; WorkloadSpec gets parse_block_size of it.
BlockSizeStr = Annotated[str, AfterValidator(_block_size)]
Positive = Annotated[int, Field(gt=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Catalog(Strict):
    """A procedure's catalog file (workloads/<name>.yaml): its format version, then the procedure's spec."""

    version: Literal[1]


C = TypeVar("C", bound=Catalog)


def load_catalog(model: type[C], file_name: str, path: Path | None = None) -> C:
    """The catalog at `path`, by default the suite's own workloads/<file_name>."""
    return load_model(model, path or WORKLOADS_DIR / file_name)


class DataPattern(Strict):
    """Reducible data for writes: compratio 2 = compress_pct 50, dedupratio 2 = dedupe_pct 50."""

    compress_pct: Pct = 0
    dedupe_pct: Pct = 0

    def apply(self, workload: WorkloadSpec) -> WorkloadSpec:
        """The pattern on a writing workload; a pure-read workload is returned unchanged."""
        if not workload.writes:
            return workload
        return workload.with_(compress_pct=self.compress_pct, dedupe_pct=self.dedupe_pct)


def grid_override(profile: Profile, key: str, model: type[BaseModel]) -> Any:
    """A grid the profile file replaced (profile.grids[key]), validated; None when not replaced."""
    raw = profile.grids.get(key) if profile.grids else None
    if raw is None:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise LabFileError(f"profile {profile.name}: grids.{key}: {problems}") from None


def pick_grid(grids: Mapping[str, Any], name: str, catalog: str) -> Any:
    try:
        return grids[name]
    except KeyError:
        raise LabFileError(f"{catalog}: no grid {name!r} for this profile (has: all, {', '.join(grids)})") from None
