"""Pin past releases of vLLM and SGLang from their sdists, for the lineage (`atlas check --past`).

Each release's sdist is taken from the package index (PEP 691 JSON, the sha256 it vouches for),
extracted with the snapshot store's safe tar extraction (nothing upstream is built or run), made
a one-commit git repository and pinned as `PROJECT@VERSION-src` the way
benchmarks/real_docs/README.md's `--source` pins are (`atlas snapshot add ... --git`). SGLang's
sdist is its `python/` folder, so it is placed there to keep the repository's layout (links).

    python benchmarks/past_pins.py [vllm@0.6.6 ...]   # default: PAST below
    atlas index vllm@0.6.6-src -j 1                   # then index each, one at a time
    python benchmarks/past_pins.py --bundle           # then rebuild snapshots/past/*.json.gz

Re-running is a no-op for what is pinned already. `--bundle` writes the lineage and the
successors of the default past pins (`DEFAULT_PAST`, pinned and indexed as above) to the files
`atlas check` reads when no past release is named (`analyzer/refs/past_bundle.py`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.version import Version

from analyzer.refs.lineage import DEFAULT_PAST
from analyzer.settings import Settings, default_cache_dir
from analyzer.snapshots.archive import extract_tar
from analyzer.snapshots.download import verify_sha256
from analyzer.snapshots.models import SnapshotError, SnapshotRef
from analyzer.snapshots.releases import IndexOptions, download, list_files
from analyzer.snapshots.store import add_git_pin, is_fetched

PAST = tuple(pin.removesuffix("-src") for pin in DEFAULT_PAST)  # the lineage's default past pins
_PREFIX = {"sglang": "python/"}  # where the sdist's package sits in the repository


def _git(cwd: Path, *args: str) -> str:
    env_args = ["-c", "user.name=atlas", "-c", "user.email=atlas@localhost", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *env_args, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def pin_past(settings: Settings, ref: str, work: Path) -> str:
    """Pin one release's sdist as `ref-src`; returns the pin's name."""
    parsed = SnapshotRef.parse(ref)
    name = f"{parsed.project}@{parsed.version}-src"
    if is_fetched(settings, name):
        return name
    files = [f for f in list_files(parsed.project, IndexOptions())
             if f.version == Version(parsed.version) and not f.is_wheel]
    if not files or files[0].sha256 is None:
        raise SnapshotError(f"{ref}: the index offers no sdist with a sha256")
    artifact = download(files[0], work / "dl")
    verify_sha256(artifact, files[0].sha256)
    repo = work / name
    prefix = _PREFIX.get(parsed.project, "")
    extract_tar(artifact, repo / prefix if prefix else repo, strip_top=True)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"{files[0].filename} (sha256 {files[0].sha256})")
    add_git_pin(settings, name, str(repo), _git(repo, "rev-parse", "HEAD"), layout_prefix=prefix)
    return name


def bundle(settings: Settings) -> int:
    """The shipped evidence, rebuilt from the default past pins (their cached lineage and
    successors when `--past` has read them already)."""
    from analyzer.refs.loader import load_lineages, load_successors
    from analyzer.refs.past_bundle import bundle_path, write_bundle

    root = Path(__file__).resolve().parent.parent / "snapshots"
    lineages, successors = load_lineages(settings, list(DEFAULT_PAST)), load_successors(settings, list(DEFAULT_PAST))
    for project in sorted(lineages):
        pins = [p for p in DEFAULT_PAST if p.startswith(f"{project}@")]
        path = bundle_path(project, root)
        write_bundle(path, project, pins, lineages[project], successors.get(project, {}))
        moves = sum(len(v) for v in successors.get(project, {}).values())
        print(f"{path}: {sum(len(v) for v in lineages[project].values())} names, {moves} moves, {path.stat().st_size} bytes")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("refs", nargs="*", default=list(PAST))
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--bundle", action="store_true", help="write snapshots/past/<project>.json.gz from DEFAULT_PAST")
    args = parser.parse_args()
    settings = Settings(cache_dir=args.cache_dir or default_cache_dir())
    if args.bundle:
        return bundle(settings)
    for ref in args.refs:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                print(pin_past(settings, ref, Path(tmp)), flush=True)
            except SnapshotError as exc:
                print(f"{ref}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
