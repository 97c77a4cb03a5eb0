"""A flag belongs to the program that takes it: in a command line, the project command another
program runs owns the flags after it (`docker run OPTS IMAGE python3 -m sglang.launch_server
...`); in prose, the program the sentence hands the flag to, named before it or after it ("add
the `--cap-add` flag to the Docker command"), or a shell script it links."""

from __future__ import annotations

from dataclasses import replace

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import EnvEntry, FlagEntry, PinView
from analyzer.refs.shell import foreign_flags, shell_refs


def test_the_project_command_another_program_runs_owns_the_flags_after_it() -> None:
    line = "docker run --gpus all --privileged -v /d:/d lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp 2"
    assert [(r.kind, r.text, r.command) for r in shell_refs(line)] == [
        ("symbol", "sglang.launch_server", None),
        ("flag", "--model-path", "sglang.launch_server"),
        ("flag", "--tp", "sglang.launch_server"),
    ]
    assert foreign_flags(line) == {"--gpus", "--privileged"}  # docker's, before the image
    ray = shell_refs("ray job submit --address=http://head:8265 -- vllm serve m --max-num-seqs 8")
    assert [(r.text, r.command) for r in ray] == [("--max-num-seqs", "vllm serve")]
    assert foreign_flags("ray job submit --address=http://head:8265 -- vllm serve m") == {"--address"}
    # an alias of docker run (its own options come from the alias) with the server after the image
    drun = shell_refs("drun -p 30000:30000 sglang_image python3 -m sglang.launch_server --chunked-prefill-size 4096")
    assert [(r.text, r.command) for r in drun if r.kind == "flag"] == [("--chunked-prefill-size", "sglang.launch_server")]


def test_no_project_command_inside_another_programs_line() -> None:
    # package names after a package manager's verb; an image whose entry point the line does not say
    for line in ("pip install vllm transformers --upgrade", "docker run --gpus all --ipc=host vllm/vllm-openai --model m"):
        assert shell_refs(line) == [], line
    assert foreign_flags("pip install vllm transformers --upgrade") == {"--upgrade"}


def test_env_vars_another_program_passes_on_are_the_projects() -> None:
    # docker's `-e` / `--env` options set the project's variables for the server in the image
    line = "docker run -e VLLM_X=1 --env SGLANG_Y --env=VLLM_Z=a -e HF_TOKEN=t img python3 -m sglang.launch_server --tp 2"
    assert [(r.kind, r.text) for r in shell_refs(line) if r.kind == "env"] == [("env", "VLLM_X"), ("env", "SGLANG_Y"), ("env", "VLLM_Z")]
    # a fragment of docker options, no command after it
    assert [(r.kind, r.text) for r in shell_refs("-e VLLM_RAW_DUMP=/dump  -v /data/dump:/dump")] == [("env", "VLLM_RAW_DUMP")]
    # a path under the folder a variable names, in code font
    assert [(r.kind, r.target) for r in extract_all([("ch.md", "Dumps go to `$VLLM_DUMP_DIR/<id>/out.txt`.\n")])] == [("env", "VLLM_DUMP_DIR")]


def _broken(doc: str, pin: PinView) -> list[str]:
    return [f.ref.text for f in check_references(extract_all([("ch.md", doc)]), [pin]) if f.status == "broken"]


def test_a_sentence_hands_a_flag_to_the_program_named_after_it(vllm30: PinView) -> None:
    doc = (
        "# Ray with vLLM\n\n"
        "Run `vllm serve m --max-num-seqs 8` on the head node. To enable admin privileges, add the "
        "`--cap-add=CAP_SYS_ADMIN` flag to the Docker command.\n\n"
        "Pass `--max-num-seqz` for the Docker deployment.\n\n"
        "Add the `--max-num-seqx` flag to the vllm serve command.\n"
    )
    assert _broken(doc, vllm30) == ["--max-num-seqz", "--max-num-seqx"]  # a deployment is no command


def test_options_for_a_linked_shell_script_are_the_scripts(vllm30: PinView) -> None:
    doc = (
        "# Cluster\n\n"
        "Run `vllm serve m --max-num-seqs 8`. To use InfiniBand, append arguments like `--privileged -e NCCL_IB_HCA=mlx5` "
        "to the <gh-file:examples/online_serving/run_cluster.sh> helper script.\n\n"
        "Or append `--privilegd` to the server.\n"
    )
    assert _broken(doc, vllm30) == ["--privilegd"]


_WRAPPER = """# Serving Voxtral behind our gateway

Most vLLM knobs are read from the environment by this repo at startup:

| Variable | Default |
|---------|---------|
| `VLLM_MAX_NUM_SEQS` | `128` |
| `VLLM_MAX_MODEL_LEN` | `1024` |
| `VLLM_ENFORCE_EAGER` | `false` |
| `VLLM_USE_GONE_KNOB` | `1` |
"""

_UPGRADE = """# Upgrading vLLM

Set `VLLM_ATTENTION_BACKEND` and `VLLM_USE_V1=0` and `VLLM_SOME_OLD_KNOB` as before; keep `VLLM_HOST_IP`.
"""


def test_env_vars_named_after_the_pins_flags_are_a_wrappers_settings(vllm30: PinView) -> None:
    flags = [FlagEntry(f) for f in ("--max-num-seqs", "--max-model-len", "--enforce-eager", "--attention-backend")]
    pin = replace(vllm30, flags=flags, envs=[EnvEntry("VLLM_HOST_IP", "vllm/envs.py")])

    def statuses(doc: str) -> dict[str, str]:
        return {f.ref.text: f.status for f in check_references(extract_all([("ch.md", doc)]), [pin]) if f.ref.kind == "env"}

    # three of the page's four unknown env vars are the server's flags in capitals: the wrapper's own
    got = statuses(_WRAPPER)
    assert got["VLLM_MAX_NUM_SEQS"] == got["VLLM_MAX_MODEL_LEN"] == got["VLLM_ENFORCE_EAGER"] == "not-checkable", got
    assert got["VLLM_USE_GONE_KNOB"] == "broken"  # no flag says whose it is
    # one such name among others the pin lacks is a removed env var of the project's (now a flag)
    got = statuses(_UPGRADE)
    assert got["VLLM_ATTENTION_BACKEND"] == "broken" and got["VLLM_HOST_IP"] == "ok", got
    # two are not enough evidence
    got = statuses(_WRAPPER.replace("| `VLLM_ENFORCE_EAGER` | `false` |\n", ""))
    assert got["VLLM_MAX_NUM_SEQS"] == "broken", got


def test_a_flag_followed_by_for_and_the_program(vllm30: PinView) -> None:
    doc = (
        "# Running vLLM in containers\n\n"
        "Run `vllm serve m --max-num-seqs 8`. For docker runs, set up shared memory: see `--shm-size` for docker "
        "and the `/dev/shm` size for Kubernetes.\n\n"
        "See `--max-num-seqy` for vLLM.\n"
    )
    assert _broken(doc, vllm30) == ["--max-num-seqy"]


def test_another_projects_worker_for_the_engine_forwards_the_servers_flags() -> None:
    refs = shell_refs("python3 -m dynamo.sglang \\\n  --model-path /model/ \\\n  --enable-deepep-moe")
    assert [(r.text, r.command, r.framework) for r in refs if r.kind == "flag"] == [
        ("--model-path", "sglang.launch_server", "sglang"),
        ("--enable-deepep-moe", "sglang.launch_server", "sglang"),
    ]
    assert [(r.text, r.command) for r in shell_refs("python3 -m dynamo.vllm.worker --enforce-eager") if r.kind == "flag"] == [("--enforce-eager", "vllm serve")]
    # Its own front end serves no engine: its options are its own.
    assert shell_refs("python3 -m dynamo.frontend --http-port=8000") == []


def test_options_quoted_as_one_string_on_their_line() -> None:
    refs = shell_refs('"--data-parallel-size 4 --speculative-model <draft> --max-num-seqs 256"')
    assert [(r.text, r.col) for r in refs] == [("--data-parallel-size", 1), ("--speculative-model", 24), ("--max-num-seqs", 52)]
    # A quoted argument of a command is that command's own business.
    assert shell_refs('echo "--max-num-seqs 8"') == []
