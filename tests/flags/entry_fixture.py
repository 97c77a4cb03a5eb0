"""A small SGLang-shaped tree whose second CLI command (`sglang generate`, and the diffusion side of
`sglang serve`) builds its parser the way SGLang's multimodal_gen does: a dispatching console
script, a fresh parser handed to adders in other modules, a local `add_argument` wrapper that
closes over the parser, f-string option names, a per-model adder picked at run time, and option
families read from the leftover arguments."""

from __future__ import annotations

import textwrap
from pathlib import Path

ENTRY_FILES = {
    "sglang/__init__.py": "",
    "sglang/cli/__init__.py": "",
    "sglang-9.9.dist-info/entry_points.txt": "[console_scripts]\nsglang = sglang.cli.main:main\n",
    "sglang/cli/main.py": """
        import argparse

        def main():
            parser = argparse.ArgumentParser()
            args, extra = parser.parse_known_args()
            if args.subcommand == "serve":
                from sglang.cli.serve import serve
                serve(args, extra)
            elif args.subcommand == "generate":
                from sglang.cli.generate import generate
                generate(args, extra)
            elif args.subcommand == "version":
                print("9.9")
    """,
    "sglang/cli/generate.py": """
        import argparse

        from sglang.cli.utils import is_diffusion

        def generate(args, extra_argv):
            if is_diffusion(extra_argv):
                from sglang.mm.cli import add_generate_args
                parser = argparse.ArgumentParser(description="generate")
                add_generate_args(parser)
                parser.parse_known_args(extra_argv)
            else:
                raise Exception("not supported")
    """,
    "sglang/cli/serve.py": """
        import argparse

        def _backend(argv):
            for i, arg in enumerate(argv):
                if arg == "--model-type" or arg.startswith("--model-type="):
                    return argv[i + 1]
            if "-h" in argv or "--help" in argv:
                return "help"
            return "auto"

        def _run_llm(argv):
            from sglang.srt.server_args import prepare_server_args
            prepare_server_args(list(argv))

        def _run_diffusion(argv):
            from sglang.mm.cli import add_serve_args
            parser = argparse.ArgumentParser()
            add_serve_args(parser)
    """,
    "sglang/cli/utils.py": "def is_diffusion(argv):\n    return '--diffusion' in argv\n",
    "sglang/mm/__init__.py": "",
    "sglang/mm/cli.py": """
        from sglang.mm.sampling import SamplingParams
        from sglang.mm.server_args import ServerArgs
        from sglang.mm.registry import config_classes

        def add_serve_args(parser):
            parser.add_argument("--config", type=str)
            return ServerArgs.add_cli_args(parser)

        def add_generate_args(parser):
            add_serve_args(parser)
            parser.add_argument("--perf-dump-path", type=str)
            SamplingParams.add_cli_args(parser)
            classes = config_classes()
            if classes:
                classes[0].add_pipeline_cli_args(parser)
            return parser
    """,
    "sglang/mm/registry.py": "def config_classes():\n    return []\n",
    "sglang/mm/server_args.py": """
        from sglang.mm.vae import VaeConfig

        class ServerArgs:
            num_gpus: int = 1

            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--num-gpus", type=int, default=ServerArgs.num_gpus)
                parser.add_argument("--ulysses-degree", type=int)
                VaeConfig.add_cli_args(parser, prefix="vae-config")
                return parser

            @classmethod
            def from_cli_args(cls, args, unknown):
                paths, rest = _extract(unknown, option_prefixes=("--component-paths.",), alias_suffix="-path")
                if rest:
                    raise SystemExit("unrecognized")

        def _extract(unknown, *, option_prefixes, alias_suffix):
            return {}, []
    """,
    "sglang/mm/vae.py": """
        class VaeConfig:
            @staticmethod
            def add_cli_args(parser, prefix="vae-config"):
                parser.add_argument(f"--{prefix}.use-tiling", action="store_true")
                return parser
    """,
    "sglang/mm/sampling.py": """
        import argparse

        class SamplingParams:
            @staticmethod
            def add_cli_args(parser):
                def add_argument(*names, **kwargs):
                    kwargs.setdefault("default", argparse.SUPPRESS)
                    return parser.add_argument(*names, **kwargs)

                add_argument("--num-frames", type=int)
                add_argument("--taylor-order", "--taylor_order", dest="taylor_order", type=int)
                return parser
    """,
    "sglang/mm/pipelines/__init__.py": "",
    "sglang/mm/pipelines/flux.py": """
        class FluxConfig:
            @staticmethod
            def add_pipeline_cli_args(parser):
                group = parser.add_argument_group("FLUX")
                group.add_argument("--flux-alpha", type=float)
    """,
    "sglang/tools/__init__.py": "",
    "sglang/tools/convert.py": """
        import argparse

        def run(args):
            return args

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--model-type", choices=["auto", "flux1"])
            parser.add_argument("--output-dir")
            run(parser.parse_args())
    """,
    "sglang/tools/dynamic.py": """
        import argparse

        def main(names):
            parser = argparse.ArgumentParser()
            for name in names:
                parser.add_argument(f"--{name}")
            parser.add_argument("--fixed")
    """,
}


def write_entry_tree(root: Path) -> Path:
    for rel, text in ENTRY_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root
