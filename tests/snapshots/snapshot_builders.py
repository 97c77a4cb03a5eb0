"""Builders for small wheels, sdists and lock files (imported by the snapshot tests)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import git

Files = dict[str, str | bytes]

DEMO_FILES: Files = {
    "demo/__init__.py": "from demo.core import run\n",
    "demo/core.py": "def run() -> int:\n    return 1\n",
    "demo/_version.py": "__version__ = version = '1.0'\n__commit_id__ = commit_id = 'gabc1234de'\n",
    "demo/templates/chat.jinja": "{{ messages }}\n",
    "demo/data/config.json": '{"a": 1}\n',
    "demo/_C.abi3.so": b"\x7fELF\x00\x00binary",
    "demo/blob.txt": b"text suffix but \x00 binary content",
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_wheel(
    path: Path, files: Files, *, name: str = "demo", version: str = "1.0", top_level: str = "demo"
) -> Path:
    """A wheel-shaped zip: package files plus a .dist-info (enough for the store)."""
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files.items():
            zf.writestr(arcname, data)
        zf.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        zf.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        zf.writestr(f"{dist}/top_level.txt", top_level + "\n")
        zf.writestr(f"{dist}/RECORD", "")
    return path


def build_sdist(path: Path, files: Files, *, top: str = "demo-1.0") -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for arcname, data in files.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(f"{top}/{arcname}" if top else arcname)
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return path


def write_lock(lock_dir: Path, project: str, version: str, artifact: Path, **extra: str) -> Path:
    """One lock file per call; `extra` overrides or adds keys of the release table."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    table = {"artifact": artifact.name, "sha256": sha256(artifact)} | extra
    body = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in table.items())
    path = lock_dir / f"{project}-{version}.toml"
    path.write_text(f'project = "{project}"\n\n[releases."{version}"]\n{body}\n')
    return path


def commit_files(
    repo: git.Repo, files: dict[str, str], message: str, remove: tuple[str, ...] = ()
) -> str:
    root = Path(repo.working_tree_dir or ".")
    for rel in remove:
        repo.index.remove([rel], working_tree=True)
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        repo.index.add([rel])
    actor = git.Actor("test", "test@example.com")
    return repo.index.commit(message, author=actor, committer=actor).hexsha
