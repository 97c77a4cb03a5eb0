"""Which archive entries a snapshot keeps: source and text, never binaries."""

from __future__ import annotations

from pathlib import PurePosixPath

# Python, docs, config, templates, and the C/C++/CUDA/Rust sources the packages ship
# (kernels are part of the design a reader may want to look at).
TEXT_SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".pyx", ".pxd", ".typed",
        ".md", ".rst", ".txt", ".csv",
        ".toml", ".json", ".yaml", ".yml", ".cfg", ".ini", ".in", ".proto",
        ".jinja", ".jinja2", ".j2", ".tmpl", ".template", ".html", ".css", ".js", ".mjs",
        ".sh",
        ".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh", ".inl", ".hip", ".cxx", ".hh", ".hxx",
        ".rs",  # the Rust router / frontend a git pin holds
    }
)  # fmt: skip

# Extensionless text files found in wheels and sdists (dist-info, licences, build files).
TEXT_NAMES = frozenset(
    {
        "license", "licence", "notice", "authors", "readme", "copying",
        "metadata", "record", "wheel", "installer", "requested", "pkg-info",
        "makefile", "dockerfile",
    }
)  # fmt: skip


def is_text_path(path: PurePosixPath) -> bool:
    name = path.name
    if name.startswith("."):  # tool dotfiles (.gitignore, .flake8): not source
        return False
    suffix = path.suffix.lower()
    if suffix:
        return suffix in TEXT_SUFFIXES
    return name.lower() in TEXT_NAMES


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first chunk: how git itself tells binary from text."""
    return b"\x00" in head
