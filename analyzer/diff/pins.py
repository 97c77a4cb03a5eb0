"""What a diff reads from one side: a release (`vllm@0.30.0`) or our `reference` engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.flags.models import EnvVar, Flag
from analyzer.graphs.store import Graphs
from analyzer.index import SnapshotIndex
from analyzer.mappings.models import REFERENCE
from analyzer.settings import Settings


class DiffError(Exception):
    """A side that cannot be opened; the message is shown to the user."""


@dataclass(slots=True)
class PinData:
    label: str  # "vllm@0.30.0" or "reference"
    project: str  # "vllm" | "sglang" | "reference"
    version: str | None
    index: SnapshotIndex
    flags: dict[str, Flag] = field(default_factory=dict)  # every option string -> its flag
    envs: dict[str, EnvVar] = field(default_factory=dict)
    graphs: Graphs | None = None  # loaded on demand (building one for a release takes minutes)
    warnings: list[str] = field(default_factory=list)


def open_pin(settings: Settings, ref: str, *, progress: bool = False, fetch: bool = True) -> PinData:
    """Index a side (cached) and read its flags; raises DiffError with a readable message."""
    from analyzer.flags import env_report, flag_report
    from analyzer.flags.models import FlagsError
    from analyzer.index import index_snapshot
    from analyzer.index.store import StoreError
    from analyzer.mappings.pins import reference_view
    from analyzer.snapshots import SnapshotError, ensure_snapshot, open_snapshot

    try:
        if ref == REFERENCE:
            return PinData(REFERENCE, REFERENCE, None, reference_view(settings, progress=progress).index)
        if "@" not in ref:
            raise DiffError(f"{ref!r}: expected a release like vllm@0.30.0, or `reference`")
        snapshot = ensure_snapshot(settings, ref) if fetch else open_snapshot(settings, ref)
        project = snapshot.ref.project
        index = index_snapshot(settings, snapshot, progress=progress)
        flags = flag_report(snapshot.package_root, project)
        envs = env_report(snapshot.package_root, project)
    except (SnapshotError, FlagsError, StoreError) as exc:
        raise DiffError(str(exc)) from None
    by_name = {name: f for f in flags.flags for name in (f.flag, *f.aliases, *f.negative_aliases, *f.hidden_aliases)}
    env_by_name = {name: e for e in envs.envs for name in (e.name, *e.deprecated_names)}
    return PinData(snapshot.name, project, snapshot.ref.version, index, by_name, env_by_name,
                   warnings=[*flags.warnings, *envs.warnings])


def load_pin_graphs(settings: Settings, pin: PinData, *, progress: bool = False) -> Graphs:
    """The call / state graphs of a side, from the graphs cache (built on first use)."""
    from analyzer.graphs.store import GraphError, directory_target, load_graphs, open_target
    from analyzer.paths import reference_root

    if pin.graphs is None:
        try:
            target = directory_target(reference_root()) if pin.project == REFERENCE else open_target(settings, pin.label)
            pin.graphs = load_graphs(settings, target, progress=progress)
        except GraphError as exc:
            raise DiffError(str(exc)) from None
    return pin.graphs
