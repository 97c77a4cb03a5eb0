"""Small package trees that mimic how vLLM and SGLang build their server parsers."""

from __future__ import annotations

import textwrap
from pathlib import Path

VLLM_FILES: dict[str, str] = {
    "vllm/__init__.py": "",
    "vllm/config/__init__.py": """
        from vllm.config.cache import CacheConfig
        from vllm.config.utils import config
        """,
    "vllm/config/utils.py": """
        def config(cls):
            return cls
        """,
    "vllm/config/cache.py": '''
        from typing import Literal

        from vllm.config.utils import config

        BlockSize = Literal[8, 16, 32]


        @config
        class CacheConfig:
            """KV cache settings."""

            block_size: BlockSize = 16  # FIELD block_size
            """Size of a cache block."""
            enable_prefix_caching: bool = True  # FIELD enable_prefix_caching
            """Reuse KV blocks across requests."""
            cache_dtype: Literal["auto", "fp8"] | None = "auto"  # FIELD cache_dtype
            """KV cache data type."""
            swap_space: float = 4.0
        ''',
    "vllm/engine/__init__.py": "",
    "vllm/engine/arg_utils.py": """
        import argparse
        from dataclasses import fields

        from vllm.config import CacheConfig
        from vllm.platforms import current_platform


        def get_kwargs(cls):
            return {f.name: {} for f in fields(cls)}


        class EngineArgs:
            @staticmethod
            def add_cli_args(parser):
                cache_kwargs = get_kwargs(CacheConfig)
                cache_group = parser.add_argument_group(
                    title="CacheConfig", description=CacheConfig.__doc__
                )
                cache_group.add_argument("--block-size", **cache_kwargs["block_size"])  # CALL block
                cache_group.add_argument(  # CALL prefix
                    "--enable-prefix-caching",
                    **{**cache_kwargs["enable_prefix_caching"], "default": None},
                )
                cache_group.add_argument("--kv-cache-dtype", "-kvd", **cache_kwargs["cache_dtype"])
                parser.add_argument("--enable-foo", action="store_true", dest="foo")  # CALL enable-foo
                parser.add_argument("--disable-foo", action="store_false", dest="foo")  # CALL disable-foo
                for name in ["alpha", "beta"]:
                    parser.add_argument(f"--{name}-weight", type=float, default=1.0)  # CALL loop
                parser.add_argument(
                    "--legacy-mode", action=argparse.BooleanOptionalAction, default=False
                )
                if "--help" in __import__("sys").argv:
                    parser.add_argument("--only-without-help", type=int)
                current_platform.extend_parser(parser)  # CALL platform
                return parser
        """,
    "vllm/platforms/__init__.py": """
        def __getattr__(name):
            raise AttributeError(name)
        """,
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/cli/__init__.py": "",
    "vllm/entrypoints/cli/serve.py": """
        from vllm.entrypoints.openai.cli_args import make_arg_parser


        class ServeSubcommand:
            name = "serve"

            def subparser_init(self, subparsers):
                serve_parser = subparsers.add_parser(self.name, help="serve")  # CALL add_parser
                serve_parser = make_arg_parser(serve_parser)
                return serve_parser
        """,
    "vllm/entrypoints/openai/__init__.py": "",
    "vllm/entrypoints/openai/cli_args.py": '''
        from vllm.config import config
        from vllm.engine.arg_utils import EngineArgs, get_kwargs


        @config
        class BaseFrontendArgs:
            """Frontend."""

            allow_credentials: bool = False  # FIELD allow_credentials
            """Allow credentials."""


        @config
        class FrontendArgs(BaseFrontendArgs):
            host: str | None = None  # FIELD host
            """Host name."""
            port: int = 8000  # FIELD port
            """Port number."""

            @classmethod
            def _customize(cls, kwargs):
                kwargs["port"]["metavar"] = "PORT"
                return kwargs

            @classmethod
            def add_cli_args(cls, parser):
                frontend_kwargs = get_kwargs(cls)
                frontend_kwargs = cls._customize(frontend_kwargs)
                group = parser.add_argument_group(title=cls.__name__.replace("Args", ""))
                for key, value in frontend_kwargs.items():
                    extra = value.pop("flags", [])
                    group.add_argument(*extra, f"--{key.replace('_', '-')}", **value)
                return parser


        def make_arg_parser(parser):
            parser.add_argument("model_tag", type=str, nargs="?", help="Model.")  # CALL model_tag
            parser = FrontendArgs.add_cli_args(parser)
            parser = EngineArgs.add_cli_args(parser)
            return parser
        ''',
    "vllm/envs.py": """
        import os

        def get_root():
            return os.getenv("VLLM_ROOT", "/tmp")

        if os.environ.get("VLLM_SIDE_CHANNEL"):  # READ side
            pass

        environment_variables = {
            "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),  # ENV host
            "VLLM_USE_V1": lambda: bool(int(os.getenv("VLLM_USE_V1", "1"))),  # ENV v1
            "VLLM_FLAG": lambda: (  # ENV flag
                bool(int(os.environ["VLLM_FLAG"])) if "VLLM_FLAG" in os.environ else True
            ),
            "VLLM_ROOT": get_root,  # ENV root
            "LOCAL_RANK": lambda: int(os.environ.get("LOCAL_RANK", "0")),  # ENV rank
        }
        """,
}

SGLANG_FILES: dict[str, str] = {
    "sglang/__init__.py": "",
    "sglang/srt/arg_utils.py": """
        from typing import Annotated

        A = Annotated


        class Arg:
            def __init__(self, **kwargs):
                self.kwargs = kwargs


        def add_cli_args_from_dataclass(parser, cls):
            raise NotImplementedError
        """,
    "sglang/srt/server_args.py": """
        import argparse
        import dataclasses
        from typing import List, Literal, Optional

        from sglang.srt.arg_utils import A, Arg, add_cli_args_from_dataclass

        POLICIES = ["lpm", "fcfs"]


        @dataclasses.dataclass
        class ServerArgs:
            model_path: A[str, Arg(help="Model path.", aliases=["--model"])]  # FIELD model_path
            tp_size: A[int, Arg(help="TP.", cli_name="--tensor-parallel-size", aliases=["--tp-size"])] = 1  # FIELD tp
            chunked_prefill_size: A[Optional[int], "Chunk size."] = None  # FIELD chunked
            schedule_policy: A[Literal["lpm", "fcfs"], "Policy."] = "fcfs"  # FIELD policy
            enable_x: A[bool, "Enable x."] = False  # FIELD enable_x
            lora_paths: A[Optional[List[str]], "LoRA."] = None  # FIELD lora
            hidden: A[int, Arg(help="no", no_cli=True)] = 0
            plain: int = 3

            @staticmethod
            def add_cli_args(parser):
                add_cli_args_from_dataclass(parser, ServerArgs)  # CALL from_dataclass
                parser.add_argument("--config", type=str, help="Config file.")  # CALL config
                parser.add_argument("--policy-alias", choices=POLICIES, default="lpm")
                for mode in ("decode", "prefill"):
                    parser.add_argument(f"--cuda-graph-{mode}", action="store_true")


        def prepare_server_args(argv):
            parser = argparse.ArgumentParser(prog="sglang serve")  # CALL root
            ServerArgs.add_cli_args(parser)
            return parser.parse_args(argv)
        """,
    "sglang/srt/environ.py": """
        import os


        class EnvField:
            def __init__(self, default, deprecated_name=None):
                self.default = default


        class EnvBool(EnvField):
            pass


        class EnvInt(EnvField):
            pass


        class Envs:
            SGLANG_FOO = EnvBool(False)  # ENV foo
            SGLANG_BAR = EnvInt(8, deprecated_name="SGLANG_OLD_BAR")  # ENV bar


        class _DeprecatedEnv:
            def __init__(self, replacement=None):
                self.replacement = replacement


        _DEPRECATED_ENVS = {
            "SGLANG_OLDER_FOO": _DeprecatedEnv(replacement="SGLANG_FOO"),
            "SGLANG_GONE": _DeprecatedEnv(),  # ENV gone
        }
        """,
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def line_of(root: Path, rel: str, marker: str) -> str:
    """`rel:line` of the line carrying `# MARKER` (so tests state lines without counting)."""
    for number, line in enumerate((root / rel).read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}") or f"# {marker}" in line:
            return f"{rel}:{number}"
    raise AssertionError(f"marker {marker!r} not in {rel}")
