"""vLLM-shaped fixture: dataclass-generated flags, BooleanOptionalAction, enable/disable pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from flags_fixtures import VLLM_FILES, line_of, write_tree

from analyzer.flags import extract_envs, extract_flags, flag_report
from analyzer.flags.models import Flag

ARGS = "vllm/engine/arg_utils.py"
FRONT = "vllm/entrypoints/openai/cli_args.py"
CACHE = "vllm/config/cache.py"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path, VLLM_FILES)


def by_flag(flags: list[Flag]) -> dict[str, Flag]:
    return {f.flag: f for f in flags}


def test_exact_flag_set_and_aliases(root: Path) -> None:
    flags = by_flag(extract_flags(root, "vllm"))
    assert {name: f.aliases for name, f in flags.items()} == {
        "--help": ["-h", "--help"],
        "--allow-credentials": ["--allow-credentials", "--no-allow-credentials"],
        "--host": ["--host"],
        "--port": ["--port"],
        "--block-size": ["--block-size"],
        "--enable-prefix-caching": ["--enable-prefix-caching", "--no-enable-prefix-caching"],
        "--kv-cache-dtype": ["--kv-cache-dtype", "-kvd"],
        "--enable-foo": ["--enable-foo"],
        "--disable-foo": ["--disable-foo"],
        "--alpha-weight": ["--alpha-weight"],
        "--beta-weight": ["--beta-weight"],
        "--legacy-mode": ["--legacy-mode", "--no-legacy-mode"],
        "--only-without-help": ["--only-without-help"],
    }


def test_dests_defaults_and_types(root: Path) -> None:
    flags = by_flag(extract_flags(root, "vllm"))
    assert flags["--enable-foo"].dest == flags["--disable-foo"].dest == "foo"
    assert flags["--disable-foo"].negates == "--enable-foo"
    assert flags["--kv-cache-dtype"].dest == "kv_cache_dtype"
    assert flags["--allow-credentials"].default == "False"
    assert flags["--enable-prefix-caching"].default == "None"  # overridden by the ** dict
    assert flags["--enable-prefix-caching"].action == "BooleanOptionalAction"
    assert flags["--enable-prefix-caching"].negative_aliases == ["--no-enable-prefix-caching"]
    assert flags["--block-size"].default == "16"
    assert flags["--block-size"].choices == [8, 16, 32]  # through the BlockSize alias
    assert flags["--block-size"].type == "int"
    assert flags["--kv-cache-dtype"].choices == ["auto", "fp8", "None"]
    assert flags["--kv-cache-dtype"].type == "optional_type(str)"
    assert flags["--port"].default == "8000" and flags["--port"].metavar == "PORT"
    assert flags["--host"].help == "Host name."
    assert flags["--alpha-weight"].default == "1.0" and flags["--alpha-weight"].type == "float"
    assert flags["--enable-foo"].default == "False" and flags["--disable-foo"].default == "True"


def test_groups(root: Path) -> None:
    flags = by_flag(extract_flags(root, "vllm"))
    assert flags["--port"].group == "Frontend"  # cls.__name__.replace("Args", "")
    assert flags["--allow-credentials"].group == "Frontend"  # inherited field
    assert flags["--block-size"].group == "CacheConfig"
    assert flags["--enable-foo"].group is None


def test_defined_at(root: Path) -> None:
    flags = by_flag(extract_flags(root, "vllm"))
    # Names spelled at the call: defined there; the field that fed kwargs is field_at.
    assert flags["--block-size"].defined_at == line_of(root, ARGS, "CALL block")
    assert flags["--block-size"].field_at == line_of(root, CACHE, "FIELD block_size")
    assert flags["--enable-prefix-caching"].defined_at == line_of(root, ARGS, "CALL prefix")
    assert flags["--enable-prefix-caching"].field_at == line_of(root, CACHE, "FIELD enable_prefix_caching")
    # Names derived from field names in a loop: defined at the field.
    assert flags["--port"].defined_at == line_of(root, FRONT, "FIELD port")
    assert flags["--allow-credentials"].defined_at == line_of(root, FRONT, "FIELD allow_credentials")
    assert flags["--alpha-weight"].defined_at == line_of(root, ARGS, "CALL loop")
    assert flags["--help"].defined_at == line_of(root, "vllm/entrypoints/cli/serve.py", "CALL add_parser")


def test_positional_condition_and_warning(root: Path) -> None:
    report = flag_report(root, "vllm")
    assert [(p.name, p.nargs) for p in report.positionals] == [("model_tag", "?")]
    assert report.positionals[0].defined_at == line_of(root, FRONT, "CALL model_tag")
    conditional = by_flag(report.flags)["--only-without-help"]
    assert conditional.condition is not None and "--help" in conditional.condition
    assert report.warnings == [
        f"{line_of(root, ARGS, 'CALL platform')}: parser passed to current_platform.extend_parser(...), "
        "which is not statically resolvable; options it might add are not listed"
    ]


def test_envs(root: Path) -> None:
    envs = {e.name: e for e in extract_envs(root, "vllm")}
    assert list(envs) == ["VLLM_HOST_IP", "VLLM_USE_V1", "VLLM_FLAG", "VLLM_ROOT", "LOCAL_RANK", "VLLM_SIDE_CHANNEL"]
    assert envs["VLLM_USE_V1"].default == '"1"'
    assert envs["VLLM_FLAG"].default == "True"
    assert envs["VLLM_ROOT"].default == '"/tmp"'  # followed into get_root
    assert envs["VLLM_HOST_IP"].defined_at == line_of(root, "vllm/envs.py", "ENV host")
    assert envs["VLLM_SIDE_CHANNEL"].source == "read"
    assert envs["VLLM_SIDE_CHANNEL"].defined_at == line_of(root, "vllm/envs.py", "READ side")


def test_envs_package_layout(root: Path) -> None:
    (root / "vllm" / "envs.py").rename(root / "vllm" / "envs_tmp.py")
    (root / "vllm" / "envs").mkdir()
    (root / "vllm" / "envs_tmp.py").rename(root / "vllm" / "envs" / "__init__.py")
    names = [e.name for e in extract_envs(root, "vllm")]
    assert "VLLM_USE_V1" in names and len(names) == 6


def test_project_autodetect_and_errors(root: Path, tmp_path: Path) -> None:
    assert [f.flag for f in extract_flags(root)][:2] == ["--help", "--allow-credentials"]
    from analyzer.flags import FlagsError

    with pytest.raises(FlagsError, match="neither"):
        extract_flags(tmp_path / "vllm" / "config")
    with pytest.raises(FlagsError, match="unknown project"):
        extract_flags(root, "tgi")
    with pytest.raises(FlagsError, match="not a directory"):
        extract_flags(root / "missing")


UNRESOLVABLE = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/cli/serve.py": """
        from vllm.helpers import make_arg_parser


        class Serve:
            name = "serve"

            def subparser_init(self, subparsers):
                return make_arg_parser(subparsers.add_parser(self.name))
        """,
    "vllm/helpers.py": """
        from vllm.plugins import discover, build

        OPTION = discover()[0]


        def make_arg_parser(parser):
            for name in discover():  # LOOP
                parser.add_argument(f"--{name}")  # DYNAMIC
            parser.add_argument(OPTION)  # OPAQUE
            parser.add_argument("--ok", **build())  # KWARGS
            return parser
        """,
}


def test_unresolvable_spots_are_reported_not_dropped(tmp_path: Path) -> None:
    root = write_tree(tmp_path, UNRESOLVABLE)
    report = flag_report(root, "vllm")
    assert [f.flag for f in report.flags] == ["--help", "--ok"]
    helpers = "vllm/helpers.py"
    assert report.warnings == [
        f"{line_of(root, helpers, 'LOOP')}: loop over non-literal 'discover()': body followed once",
        f"{line_of(root, helpers, 'DYNAMIC')}: option name not statically known: f\"--{{name}}\"",
        f"{line_of(root, helpers, 'DYNAMIC')}: add_argument with no static option name: skipped",
        f"{line_of(root, helpers, 'OPAQUE')}: option name not statically known: discover()[0]",
        f"{line_of(root, helpers, 'OPAQUE')}: add_argument with no static option name: skipped",
        f"{line_of(root, helpers, 'KWARGS')}: keyword arguments not statically known: **build()",
    ]


def test_package_dir_itself_is_accepted(root: Path) -> None:
    assert len(extract_flags(root / "vllm")) == len(extract_flags(root))


def test_a_literal_alias_inside_a_literal_is_flattened_into_the_choices(tmp_path: Path) -> None:
    # vLLM's `RunnerOption = Literal["auto", RunnerType]` with `RunnerType = Literal["generate", ...]`:
    # the choices are all four values (once read as `["auto"]`, which made `--runner generate`
    # look invalid to the checker); a name that is no Literal leaves the choices unknown.
    files = dict(VLLM_FILES)
    files[CACHE] = files[CACHE].replace(
        'cache_dtype: Literal["auto", "fp8"] | None = "auto"  # FIELD cache_dtype',
        'cache_dtype: Literal["auto", KvDtype] | None = "auto"  # FIELD cache_dtype',
    ).replace("BlockSize = Literal[8, 16, 32]", 'BlockSize = Literal[8, 16, 32]\n        KvDtype = Literal["fp8", "fp8_e4m3"]')
    flags = by_flag(extract_flags(write_tree(tmp_path / "nested", files), "vllm"))
    assert flags["--kv-cache-dtype"].choices == ["auto", "fp8", "fp8_e4m3", "None"]  # (`| None`, as before)
    files[CACHE] = files[CACHE].replace('KvDtype = Literal["fp8", "fp8_e4m3"]', "KvDtype = str")
    flags = by_flag(extract_flags(write_tree(tmp_path / "opaque", files), "vllm"))
    assert not flags["--kv-cache-dtype"].choices


def test_a_literal_imported_only_for_type_checkers_gives_the_values_the_config_checks(tmp_path: Path) -> None:
    # vLLM's `quantization: QuantizationMethods | str | None`, with `QuantizationMethods = str`
    # outside `if TYPE_CHECKING:`: argparse takes any string (no choices), the config checks the
    # value against the Literal (`typed_values`, read by `atlas check` for `--quantization x`).
    files = dict(VLLM_FILES)
    files["vllm/config/dtypes.py"] = 'from typing import Literal\n\nKvDtype = Literal["fp8", "fp8_e4m3"]\n'
    files[CACHE] = files[CACHE].replace(
        "from vllm.config.utils import config\n",
        "from typing import TYPE_CHECKING\n\n        from vllm.config.utils import config\n\n"
        "        if TYPE_CHECKING:\n            from vllm.config.dtypes import KvDtype\n        else:\n            KvDtype = str\n",
        1,
    ).replace('cache_dtype: Literal["auto", "fp8"] | None = "auto"', 'cache_dtype: KvDtype | str | None = "auto"')
    flags = by_flag(extract_flags(write_tree(tmp_path / "typed", files), "vllm"))
    assert not flags["--kv-cache-dtype"].choices
    assert flags["--kv-cache-dtype"].typed_values == ["fp8", "fp8_e4m3"]
    assert flags["--block-size"].typed_values is None  # real choices: nothing more to say
