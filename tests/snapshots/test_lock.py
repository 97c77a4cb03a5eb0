"""`atlas snapshot lock`: pin a release in one command, from a local package index
folder (--find-links, --no-index) or a PEP 691 JSON index served on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from snapshot_builders import build_sdist, build_wheel, commit_files

from analyzer.settings import Settings
from analyzer.snapshots import is_fetched, load_locks, open_snapshot
from analyzer.snapshots.lock import lock_releases
from analyzer.snapshots.models import SnapshotError
from analyzer.snapshots.releases import IndexFile, IndexOptions, choose_artifact
from analyzer.snapshots.store import add_git_pin, remove_snapshot


def _files(version: str, commit: str | None) -> dict[str, str]:
    recorded = f"'g{commit}'" if commit else "None"
    return {
        "demo/__init__.py": "",
        "demo/core.py": f"def run() -> str:\n    return {version!r}\n",
        "demo/_version.py": f"__version__ = {version!r}\n__commit_id__ = {recorded}\n",
    }


def _wheel(
    folder: Path, version: str, commit: str | None = "abc1234de", tag: str = "py3-none-any"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return build_wheel(
        folder / f"demo-{version}-{tag}.whl", _files(version, commit), version=version
    )


@pytest.fixture
def house(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    _wheel(folder, "1.0", "aaaa1111b")
    _wheel(folder, "1.1", "bbbb2222c")
    _wheel(folder, "1.3rc1", "cccc3333d")
    _wheel(folder, "0.9", None)
    (folder / "other-5.0-py3-none-any.whl").write_bytes(b"another project")
    return folder


def _local(house: Path) -> IndexOptions:
    return IndexOptions(find_links=(house,), no_index=True)


def test_lock_records_artifact_sha_and_commit_and_stores_the_tree(
    settings: Settings, house: Path, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    (result,) = lock_releases(settings, ["demo@1.0"], _local(house), lock_dir=locks)
    wheel = house / "demo-1.0-py3-none-any.whl"
    assert result.action == "locked"
    assert result.artifact == wheel.name
    assert result.sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert result.upstream_commit == "aaaa1111b"
    entry = load_locks(locks)["demo@1.0"]  # the written file is a valid lock file
    assert (entry.artifact, entry.sha256, entry.upstream_commit) == (
        wheel.name,
        result.sha256,
        "aaaa1111b",
    )
    snap = open_snapshot(settings, "demo@1.0")
    assert (snap.package_root / "demo" / "core.py").read_text().endswith("return '1.0'\n")

    before = (locks / "demo.toml").read_bytes()
    (again,) = lock_releases(settings, ["demo@1.0"], _local(house), lock_dir=locks)
    assert again.action == "unchanged"
    assert (locks / "demo.toml").read_bytes() == before


def test_latest_picks_the_newest_final_release_and_several_refs_lock_at_once(
    settings: Settings, house: Path, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    results = lock_releases(settings, ["demo@latest", "demo@1.0"], _local(house), lock_dir=locks)
    assert [r.ref for r in results] == ["demo@1.1", "demo@1.0"]
    assert sorted(load_locks(locks)) == ["demo@1.0", "demo@1.1"]
    text = (locks / "demo.toml").read_text()
    assert text.count("[releases.") == 2 and text.count('project = "demo"') == 1


def test_missing_version_lists_the_nearest_and_writes_nothing(
    settings: Settings, house: Path, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    with pytest.raises(SnapshotError) as err:
        lock_releases(settings, ["demo@1.2"], _local(house), lock_dir=locks)
    message = str(err.value)
    assert "demo 1.2 is not on" in message
    assert "nearest versions: 0.9, 1.0, 1.1, 1.3rc1" in message
    assert not locks.exists()
    with pytest.raises(SnapshotError, match="no release of nothing"):
        lock_releases(settings, ["nothing@1.0"], _local(house), lock_dir=locks)


def test_a_wheel_without_a_recorded_commit_is_locked_without_one(
    settings: Settings, house: Path, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    (result,) = lock_releases(settings, ["demo@0.9"], _local(house), lock_dir=locks)
    assert result.upstream_commit is None
    assert load_locks(locks)["demo@0.9"].upstream_commit is None
    assert "records no upstream commit" in (locks / "demo.toml").read_text()
    assert open_snapshot(settings, "demo@0.9").upstream_commit is None


def test_an_sdist_only_release_is_locked_without_building_it(
    settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    # A setup.py that would leave a mark if anything ran it.
    marker = tmp_path / "ran"
    files = _files("2.0", "dddd4444e") | {"setup.py": f"open({str(marker)!r}, 'w').write('x')\n"}
    build_sdist(folder / "demo-2.0.tar.gz", files, top="demo-2.0")
    locks = tmp_path / "locks"
    (result,) = lock_releases(settings, ["demo@2.0"], _local(folder), lock_dir=locks)
    assert result.artifact == "demo-2.0.tar.gz" and result.upstream_commit == "dddd4444e"
    assert load_locks(locks)["demo@2.0"].kind == "sdist"
    assert (open_snapshot(settings, "demo@2.0").tree / "demo" / "core.py").is_file()
    assert not marker.exists()


def test_platform_wheels_are_chosen_by_the_stated_rule() -> None:
    from packaging.version import Version

    def pick(*names: str) -> str:
        files = [IndexFile(n, Version("1.0"), n) for n in names]
        return choose_artifact(files, Version("1.0")).filename

    mac = "demo-1.0-cp312-cp312-macosx_14_0_arm64.whl"
    cp310 = "demo-1.0-cp310-cp310-manylinux_2_28_x86_64.whl"
    cp311 = "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    cp311_new = "demo-1.0-cp311-cp311-manylinux_2_34_x86_64.whl"
    abi3 = "demo-1.0-cp311-abi3-manylinux_2_28_x86_64.whl"
    arm = "demo-1.0-cp312-cp312-manylinux_2_28_aarch64.whl"
    sdist = "demo-1.0.tar.gz"
    pure = "demo-1.0-py3-none-any.whl"
    assert pick(mac, cp310, sdist, pure) == pure
    assert pick(mac, cp310, cp311, arm, sdist) == cp311  # newest CPython on Linux x86_64
    assert pick(cp311, cp311_new) == cp311_new  # then the newest platform tag
    assert pick(cp311_new, abi3) == abi3  # abi3 before a version-specific ABI
    assert pick(mac, arm, sdist) == sdist  # no Linux x86_64 wheel: the sdist
    assert pick(arm, mac) == mac  # only foreign wheels: ties fall to the name
    # The order the index lists them in does not matter.
    assert pick(sdist, cp311, mac, cp310) == pick(cp310, mac, cp311, sdist)


def test_a_changed_artifact_is_refused_and_nothing_is_stored(
    settings: Settings, house: Path, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    lock_releases(settings, ["demo@1.0"], _local(house), lock_dir=locks)
    remove_snapshot(settings, "demo@1.0")
    before = (locks / "demo.toml").read_bytes()
    _wheel(house, "1.0", "eeee5555f")  # same name, other content
    with pytest.raises(SnapshotError, match=r"sha256 mismatch.*nothing was stored"):
        lock_releases(settings, ["demo@1.0"], _local(house), lock_dir=locks)
    assert not is_fetched(settings, "demo@1.0")
    assert (locks / "demo.toml").read_bytes() == before


class _Index:
    """A PEP 691 JSON simple index over a folder; `lie` replaces one file's sha256."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.lie: dict[str, str] = {}
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/simple/demo/":
                    files = [
                        {
                            "filename": p.name,
                            "url": f"/files/{p.name}",
                            "hashes": {
                                "sha256": index.lie.get(
                                    p.name, hashlib.sha256(p.read_bytes()).hexdigest()
                                )
                            },
                        }
                        for p in sorted(index.folder.iterdir())
                    ]
                    self._send(
                        json.dumps({"files": files}).encode(), "application/vnd.pypi.simple.v1+json"
                    )
                elif self.path.startswith("/files/"):
                    self._send(
                        (index.folder / self.path[7:]).read_bytes(), "application/octet-stream"
                    )
                else:
                    self.send_error(404)

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"


@pytest.fixture
def index(house: Path) -> Iterator[_Index]:
    served = _Index(house)
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def test_lock_from_a_json_index_checks_the_sha256_it_vouches_for(
    settings: Settings, index: _Index, tmp_path: Path
) -> None:
    locks = tmp_path / "locks"
    options = IndexOptions(index_url=index.url)
    index.lie["demo-1.0-py3-none-any.whl"] = "0" * 64
    with pytest.raises(SnapshotError, match="the index says 0000"):
        lock_releases(settings, ["demo@1.0"], options, lock_dir=locks)
    assert not is_fetched(settings, "demo@1.0") and not locks.exists()
    (result,) = lock_releases(settings, ["demo@latest"], options, lock_dir=locks)
    assert (result.ref, result.upstream_commit) == ("demo@1.1", "bbbb2222c")


def test_a_new_lock_file_for_a_known_project_starts_from_the_bundled_defaults(
    settings: Settings, tmp_path: Path
) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    files = {"vllm/__init__.py": "", "vllm/_version.py": "__commit_id__ = 'g123456789'\n"}
    build_wheel(
        folder / "vllm-9.9.0-cp38-abi3-manylinux_2_28_x86_64.whl",
        files,
        name="vllm",
        version="9.9.0",
        top_level="vllm",
    )
    locks = tmp_path / "book-locks"
    lock_releases(settings, ["vllm@9.9.0"], _local(folder), lock_dir=locks)
    data = tomllib.loads((locks / "vllm.toml").read_text())
    assert data["repository"] == "https://github.com/vllm-project/vllm"
    assert data["releases"]["9.9.0"]["upstream_commit"] == "123456789"


def test_cli_lock_prints_what_it_did_and_fails_clearly(cli, house: Path, tmp_path: Path) -> None:
    locks = str(tmp_path / "locks")
    common = ["--find-links", str(house), "--no-index", "--lock-dir", locks]
    result = cli("snapshot", "lock", "demo@1.0", "demo@latest", *common)
    assert result.exit_code == 0, result.output
    assert "demo@1.0: locked" in result.output and "demo@1.1: locked" in result.output
    result = cli("snapshot", "lock", "demo@1.0", *common, "--json")
    assert json.loads(result.stdout)[0]["action"] == "unchanged"
    result = cli("snapshot", "lock", "demo@7", *common)
    assert result.exit_code == 2 and "nearest versions" in result.output
    assert "Traceback" not in result.output


def test_git_pin_by_tag_or_branch_resolves_to_its_commit_now(
    settings: Settings, upstream_repo
) -> None:
    repo, (first, second) = upstream_repo
    repo.create_tag("v1.0", ref=first)
    url = str(Path(repo.working_tree_dir or "."))
    snap, added = add_git_pin(settings, "demo@v1.0", url, None, git_ref="v1.0")
    assert added and snap.upstream_commit == first
    branch = repo.active_branch.name
    snap, _ = add_git_pin(settings, "demo@head", url, None, git_ref=branch)
    assert snap.upstream_commit == second
    third = commit_files(repo, {"python/demo/later.py": "Y = 2\n"}, "later")
    snap, _ = add_git_pin(settings, "demo@next", url, None, git_ref=branch)
    assert snap.upstream_commit == third  # the branch moved: the mirror was fetched first
    with pytest.raises(SnapshotError, match="no tag or branch named 'v9'"):
        add_git_pin(settings, "demo@v9", url, None, git_ref="v9")
    with pytest.raises(SnapshotError, match="not a valid tag or branch"):
        add_git_pin(settings, "demo@x", url, None, git_ref="--upload-pack=x")
