"""Tiny fake vLLM / SGLang releases (two vLLM versions, one SGLang) and mapping files.

Between vllm 1.0 and 2.0: `Scheduler._preempt` becomes `_preempt_request`, the
block pool moves from `vllm/core/pool.py` to `vllm/core/kv/pool.py`, the flag
`--block-size` is renamed `--kv-block-size`, and `VLLM_BAR` is added.
"""

from __future__ import annotations

import hashlib
import textwrap
import zipfile
from pathlib import Path

Files = dict[str, str]

_VLLM_PARSER = """
    import argparse


    class EngineArgs:
        @staticmethod
        def add_cli_args(parser):
            parser.add_argument("--max-num-seqs", type=int, default=128)
            parser.add_argument("{block_flag}", type=int, default=16)
            return parser
    """

_VLLM_SERVE = """
    from vllm.engine.arg_utils import EngineArgs


    class ServeSubcommand:
        name = "serve"

        def subparser_init(self, subparsers):
            serve_parser = subparsers.add_parser(self.name, help="serve")
            serve_parser = EngineArgs.add_cli_args(serve_parser)
            return serve_parser
    """

_VLLM_POOL = """
    class BlockPool:
        def __init__(self, n: int) -> None:
            self.free_ids = list(range(n))
            self.ref_counts = [0] * n

        def allocate(self) -> int:
            block = self.free_ids.pop()
            self.ref_counts[block] += 1
            return block

        def free(self, block: int) -> None:
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_ids.append(block)
    """

_VLLM_SCHED = """
    from {pool_module} import BlockPool


    class Scheduler:
        def __init__(self) -> None:
            self.pool = BlockPool(8)
            self.waiting: list[int] = []
            self.running: list[int] = []

        def schedule(self) -> list[int]:
            while self.waiting:
                self.running.append(self.waiting.pop())
                self.pool.allocate()
            if len(self.running) > 4:
                self.{preempt}()
            return self.running

        def {preempt}(self) -> None:
            victim = self.running.pop()
            self.pool.free(victim)
            self.waiting.append(victim)
    """

_VLLM_ENVS = """
    import os

    environment_variables = {{
        "VLLM_FOO": lambda: os.getenv("VLLM_FOO", "0"),{extra}
    }}
    """


def vllm_files(version: str) -> Files:
    new = version != "1.0"
    pool_module = "vllm.core.kv.pool" if new else "vllm.core.pool"
    files = {
        "vllm/__init__.py": "",
        "vllm/core/__init__.py": "",
        "vllm/engine/__init__.py": "",
        "vllm/engine/arg_utils.py": _VLLM_PARSER.format(block_flag="--kv-block-size" if new else "--block-size"),
        "vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/cli/__init__.py": "",
        "vllm/entrypoints/cli/serve.py": _VLLM_SERVE,
        "vllm/core/sched.py": _VLLM_SCHED.format(
            pool_module=pool_module, preempt="_preempt_request" if new else "_preempt"
        ),
        "vllm/envs.py": _VLLM_ENVS.format(
            extra='\n        "VLLM_BAR": lambda: os.getenv("VLLM_BAR", "1"),' if new else ""
        ),
    }
    if new:
        files["vllm/core/kv/__init__.py"] = ""
        files["vllm/core/kv/pool.py"] = _VLLM_POOL
    else:
        files["vllm/core/pool.py"] = _VLLM_POOL
    return files


SGLANG_FILES: Files = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": """
        import argparse
        import dataclasses


        @dataclasses.dataclass
        class ServerArgs:
            page_size: int = 1

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--page-size", type=int, default=1)
                parser.add_argument("--schedule-policy", type=str, default="lpm")


        def prepare_server_args(argv):
            parser = argparse.ArgumentParser(prog="sglang serve")
            ServerArgs.add_cli_args(parser)
            return parser.parse_args(argv)
        """,
    "sglang/srt/environ.py": """
        class EnvField:
            def __init__(self, default):
                self.default = default


        class EnvBool(EnvField):
            pass


        class Envs:
            SGLANG_ENABLE_TORCH_COMPILE = EnvBool(False)
        """,
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": """
        from sglang.srt.mem_cache.radix_cache import RadixCache


        class Scheduler:
            def __init__(self) -> None:
                self.tree_cache = RadixCache()
                self.waiting_queue: list[int] = []
                self.running_batch: list[int] = []

            def get_next_batch_to_run(self) -> list[int]:
                if self.waiting_queue:
                    return self.get_new_batch_prefill()
                return self.running_batch

            def get_new_batch_prefill(self) -> list[int]:
                req = self.waiting_queue.pop()
                self.tree_cache.match_prefix(req)
                self.running_batch.append(req)
                return self.running_batch
        """,
    "sglang/srt/mem_cache/__init__.py": "",
    "sglang/srt/mem_cache/radix_cache.py": """
        class RadixCache:
            def __init__(self) -> None:
                self.root_node: dict[int, int] = {}

            def match_prefix(self, key: int) -> int:
                return self.root_node.get(key, 0)
        """,
}


def write_tree(root: Path, files: Files) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def build_release(folder: Path, project: str, version: str, files: Files) -> tuple[Path, str]:
    """A wheel-shaped zip of `files`; returns its path and sha256."""
    wheel = folder / f"{project}-{version}-py3-none-any.whl"
    dist = f"{project}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel, text in files.items():
            zf.writestr(rel, textwrap.dedent(text).lstrip("\n"))
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n")
        zf.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}/top_level.txt", project + "\n")
        zf.writestr(f"{dist}/RECORD", "")
    return wheel, hashlib.sha256(wheel.read_bytes()).hexdigest()


def write_locks(lock_dir: Path, releases: dict[str, list[tuple[str, Path, str]]]) -> Path:
    """One lock file per project: project -> [(version, wheel, sha256)]."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    for project, entries in releases.items():
        lines = [f'project = "{project}"', f'package = "{project}"', 'layout_prefix = ""', ""]
        for version, wheel, digest in entries:
            lines += [f'[releases."{version}"]', f'artifact = "{wheel.name}"', f'sha256 = "{digest}"', ""]
        (lock_dir / f"{project}.toml").write_text("\n".join(lines))
    return lock_dir
