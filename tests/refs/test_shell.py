from __future__ import annotations

from analyzer.refs.shell import foreign_flags, foreign_words, looks_like_command, shell_refs


def test_vllm_serve_flags_across_continuation_lines() -> None:
    snippet = (
        "VLLM_LOGGING_LEVEL=DEBUG vllm serve Qwen/Qwen3-0.6B --enable-prefix-caching \\\n"
        "    --max-num-seqs=64\n"
    )
    refs = shell_refs(snippet)
    got = [(r.kind, r.text, r.line, r.col, r.framework, r.command, r.server_flag) for r in refs]
    assert got == [
        ("env", "VLLM_LOGGING_LEVEL", 0, 0, "vllm", None, False),
        ("symbol", "vllm serve", 0, snippet.index("vllm serve"), "vllm", "vllm serve", False),  # the subcommand itself
        ("flag", "--enable-prefix-caching", 0, snippet.index("--enable"), "vllm", "vllm serve", True),
        ("flag", "--max-num-seqs", 1, 4, "vllm", "vllm serve", True),
    ]


def test_python_module_commands() -> None:
    refs = shell_refs("$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-0.6B --chunked-prefill-size 4096")
    assert [(r.kind, r.target, r.framework) for r in refs] == [
        ("symbol", "sglang.launch_server", "sglang"),
        ("flag", "--model-path", "sglang"),
        ("flag", "--chunked-prefill-size", "sglang"),
    ]
    assert all(r.server_flag for r in refs if r.kind == "flag")


def test_other_programs_flags_are_not_references() -> None:
    snippet = "pip install --upgrade vllm\nuv pip install torchvision --index-url https://download.pytorch.org/whl/cpu\n# vllm serve --commented-out\n"
    assert shell_refs(snippet) == []


def test_benchmark_command_flags_are_not_server_flags() -> None:
    refs = shell_refs("vllm bench serve --dataset-name random && export SGLANG_LOG_LEVEL=debug")
    flag = next(r for r in refs if r.kind == "flag")
    assert flag.command == "vllm bench serve" and not flag.server_flag  # the subcommand runs its own parser
    env = next(r for r in refs if r.kind == "env")
    assert env.target == "SGLANG_LOG_LEVEL" and env.framework == "sglang"


def test_repository_script_path() -> None:
    refs = shell_refs("python benchmarks/benchmark_serving.py --backend vllm")
    assert refs[0].kind == "path" and refs[0].target == "benchmarks/benchmark_serving.py"


def test_unbalanced_quotes_do_not_crash() -> None:
    refs = shell_refs("vllm serve 'model --max-num-seqs 4")
    assert isinstance(refs, list)


def test_looks_like_command() -> None:
    assert looks_like_command("vllm serve Qwen/Qwen3-0.6B --enable-prefix-caching")
    assert looks_like_command("VLLM_USE_V1=1 python -m vllm.entrypoints.openai.api_server")
    assert not looks_like_command("vllm")
    assert not looks_like_command("Scheduler.schedule()")


def test_a_command_written_in_a_comment_keeps_its_own_flags() -> None:
    snippet = (
        "# export CUDA_VISIBLE_DEVICES=$(python3 \"$ENV_PY\" print-idle-gpus --count 4)\n"
        "# add --enable-prefix-caching for repeated prompts\n"
        "vllm serve m --max-num-seqs 8\n"
    )
    flags = [(r.text, r.command) for r in shell_refs(snippet) if r.kind == "flag"]
    # The tool's `--count` is not `vllm serve`'s; a prose comment's flag still annotates the command.
    assert flags == [("--enable-prefix-caching", "vllm serve"), ("--max-num-seqs", "vllm serve")]


def test_an_aliased_command_passes_its_flags_to_its_program() -> None:
    # SGLang's AMD page: docker's options live inside the quoted value of an alias.
    snippet = "alias drun='docker run -it --rm --network=host --privileged --device=/dev/kfd \\\n    --ipc=host -v /data:/data'\n"
    assert {"--network", "--privileged", "--device", "--ipc"} <= foreign_flags(snippet)


def test_names_handed_to_another_program_are_the_documents_own() -> None:
    snippet = (
        "docker build -t sglang_image -f Dockerfile.rocm .\n"
        "drun -p 30000:30000 --env \"HF_TOKEN=<secret>\" sglang_image \\\n"
        "    python3 -m sglang.launch_server --model-path some_org/some_model\n"
        "grep -rn \"schedule_batch\" python/\n"
    )
    words = foreign_words(snippet)
    assert "sglang_image" in words
    # Not the words of the project command it runs, nor a quoted search pattern.
    assert "python3" not in words and "schedule_batch" not in words
    # Nor the words of a console block's output lines.
    assert "swap_space" not in foreign_words("$ vllm serve some_org/some_model\nINFO: swap_space is deprecated\nWARNING gpu_blocks low\n")
