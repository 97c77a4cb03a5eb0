"""Tensor parallelism (reference_engine/distributed/): two ranks on gloo against one process.

Random workloads (greedy and seeded sampling, n > 1, aborts, preemption by recompute and
swap, both prefix caches) give every request the tokens it gets alone on a single-process
engine; the float64 checkpoint makes ties impossible, so the partial sums of row-parallel
layers cannot flip a token. Sharded loading is checked slice by slice against the checkpoint,
bad layouts fail before any process starts, and a worker killed with SIGKILL stops the engine
with a clear error, leaving no process behind.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
from test_verify_random_workloads import (
    Req,
    assert_pool_restored,
    assert_tokens_equal_solo,
    drive,
    make_engine,
    random_workload,
)

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.distributed.executor import WorkerError
from reference_engine.distributed.parallel_state import GroupCoordinator, ParallelState
from reference_engine.loader import iter_checkpoint, load_model_config
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams

TIMEOUT_S = 60.0  # collectives; generous for a loaded 2-core machine


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"tensor_parallel_size": 3}, r"num_attention_heads \(4\) is not divisible"),
        ({"tensor_parallel_size": 0}, "positive integer"),
        ({"tensor_parallel_size": 2, "expert_parallel_size": 4}, "must equal"),
        ({"expert_parallel_size": 2}, "needs a mixture-of-experts model"),
        ({"context_parallel_size": 2, "expert_parallel_size": 2}, "not expert parallelism"),
        ({"pipeline_parallel_size": 3}, r"num_hidden_layers \(2\) is not divisible"),
    ],
)
def test_layouts_that_do_not_fit_fail_before_start(
    random_checkpoint: Any, knobs: dict[str, int], message: str
) -> None:
    model_dir = random_checkpoint("qwen3")
    with pytest.raises(ConfigError, match=message):
        make_engine(model_dir, **knobs)
    assert not dist.is_initialized()


@pytest.mark.parametrize("family", ["qwen3", "llama"])
def test_each_rank_loads_its_slice_of_the_checkpoint(random_checkpoint: Any, family: str) -> None:
    """qwen3: 2 KV heads split over 2 ranks, tied embedding; llama: 1 KV head replicated,
    biases (q/k/v/o) and an untied LM head."""
    model_dir = random_checkpoint(family)
    full = dict(iter_checkpoint(model_dir))
    cfg = EngineConfig(model=str(model_dir), dtype="float64", num_gpu_blocks=4, block_size=4)
    model_cfg = load_model_config(cfg)
    d, kv_heads = model_cfg.head_dim, model_cfg.num_key_value_heads
    for rank in range(2):
        state = ParallelState(tp=GroupCoordinator(rank, 2))  # loading needs no group
        params = dict(ModelRunner(model_cfg, cfg, state).model.named_parameters())

        def half(t: torch.Tensor, dim: int, r: int = rank) -> torch.Tensor:
            return t.chunk(2, dim=dim)[r]

        p = "model.layers.1."
        q = half(full[p + "self_attn.q_proj.weight"], 0)
        k, v = full[p + "self_attn.k_proj.weight"], full[p + "self_attn.v_proj.weight"]
        if kv_heads >= 2:
            k, v = half(k, 0), half(v, 0)
        assert kv_heads >= 2 or k.shape[0] == d  # one KV head: every rank holds all of it
        assert torch.equal(params[p + "self_attn.qkv_proj.weight"], torch.cat([q, k, v]))
        o = full[p + "self_attn.o_proj.weight"]
        assert torch.equal(params[p + "self_attn.o_proj.weight"], half(o, 1))
        gate, up = full[p + "mlp.gate_proj.weight"], full[p + "mlp.up_proj.weight"]
        assert torch.equal(
            params[p + "mlp.gate_up_proj.weight"], torch.cat([half(gate, 0), half(up, 0)])
        )
        assert torch.equal(
            params[p + "mlp.down_proj.weight"], half(full[p + "mlp.down_proj.weight"], 1)
        )
        embed = full["model.embed_tokens.weight"]
        assert torch.equal(params["model.embed_tokens.weight"], half(embed, 0))
        if "lm_head.weight" in full:
            assert torch.equal(params["lm_head.weight"], half(full["lm_head.weight"], 0))
        if family == "llama":  # o_proj's bias is whole on every rank (added after the sum)
            assert torch.equal(
                params[p + "self_attn.o_proj.bias"], full[p + "self_attn.o_proj.bias"]
            )
        # Norms are replicated.
        assert torch.equal(params["model.norm.weight"], full["model.norm.weight"])


def _workloads(seed: str, count: int) -> list[list[Any]]:
    rng = random.Random(seed)
    return [random_workload(rng) for _ in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("family", "cache", "preemption"),
    [
        ("qwen3", "hash", "recompute"),
        ("llama", "radix", "swap"),
        ("qwen3_moe", "radix", "recompute"),  # every expert's MLP split, one all-reduce
    ],
)
def test_tp2_tokens_equal_one_process(
    random_checkpoint: Any, family: str, cache: str, preemption: str
) -> None:
    model_dir = random_checkpoint(family)
    workloads = _workloads(f"tp2-{family}-{cache}", 6)
    longest = max(len(r.prompt) + (r.params.max_tokens or 0) for w in workloads for r in w)
    blocks = math.ceil(longest / 4) + 1  # barely one long request: preemption is certain
    solo = make_engine(model_dir, prefix_caching="none", max_num_seqs=8)
    solo_cache: dict[Any, list[list[int]]] = {}
    engine = make_engine(
        model_dir,
        tensor_parallel_size=2,
        distributed_timeout_s=TIMEOUT_S,
        num_gpu_blocks=blocks,
        max_num_batched_tokens=8,
        max_num_seqs=4,
        prefix_caching=cache,
        preemption_mode=preemption,
        num_cpu_blocks=blocks if preemption == "swap" else 0,
    )
    try:
        for reqs in workloads:
            assert_tokens_equal_solo(drive(engine, reqs), reqs, solo, solo_cache)
            assert_pool_restored(engine)  # the one pool, on the driver
        stats = engine.stats()
        assert stats.num_preemptions > 0
        assert cache == "none" or stats.prefix_cache_hit_tokens > 0
        assert preemption != "swap" or stats.num_swap_outs > 0
    finally:
        engine.shutdown()
    assert not dist.is_initialized()
    assert all(not p.is_alive() for p in engine.runner.procs)


@pytest.mark.slow
def test_killed_worker_stops_the_engine_with_a_clear_error(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), tensor_parallel_size=2, distributed_timeout_s=TIMEOUT_S
    )
    params = SamplingParams(temperature=0.0, max_tokens=4, ignore_eos=True)
    engine.add_request("a", [5, 6, 7], params)
    engine.step()  # the ranks work together
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGKILL)
    worker.join(timeout=30)
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"atlas-rank-1 .* exited with code -9"):
        while engine.has_unfinished_requests():
            engine.step()
    assert time.monotonic() - start < TIMEOUT_S
    assert not dist.is_initialized()
    assert all(not p.is_alive() for p in engine.runner.procs)
    with pytest.raises(WorkerError, match="shut down"):
        engine.step()


@pytest.mark.slow
def test_hung_worker_stops_the_engine_after_the_timeout(random_checkpoint: Any) -> None:
    engine = make_engine(
        random_checkpoint("qwen3"), tensor_parallel_size=2, distributed_timeout_s=4
    )
    (worker,) = engine.runner.procs
    os.kill(worker.pid, signal.SIGSTOP)  # alive but never answers
    engine.add_request("a", [5, 6, 7], SamplingParams(temperature=0.0, max_tokens=2))
    start = time.monotonic()
    with pytest.raises(WorkerError, match="every rank stopped"):
        engine.step()
    assert time.monotonic() - start < 30
    worker.join(timeout=10)
    assert not worker.is_alive() and not dist.is_initialized()


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"enable_lora": True}, "enable_lora with several ranks is not implemented"),
        ({"quantization": "int8"}, "quantization with several ranks"),
    ],
)
def test_features_not_sharded_yet_say_so(
    random_checkpoint: Any, knobs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        make_engine(random_checkpoint("qwen3"), tensor_parallel_size=2, **knobs)
    assert not dist.is_initialized()


TORCHRUN_SCRIPT = """
import json, os, sys
from reference_engine import LLM, SamplingParams
llm = LLM(model=sys.argv[1], dtype="float64", tensor_parallel_size=2, distributed_timeout_s=60)
# Only rank 0 gets here: the other rank served it inside LLM() and exited.
outs = llm.generate([[5, 6, 7], [9, 10]], SamplingParams(temperature=0.0, max_tokens=6))
llm.engine.shutdown()
json.dump([o.outputs[0].token_ids for o in outs], open(sys.argv[2], "w"))
"""


@pytest.mark.slow
def test_torchrun_ranks_serve_the_driver(random_checkpoint: Any, tmp_path: Path) -> None:
    """torchrun starts both ranks (env://); rank 0 drives, rank 1 serves, outputs as alone."""
    import subprocess
    import sys

    model_dir = random_checkpoint("qwen3")
    script, result = tmp_path / "run.py", tmp_path / "tokens.json"
    script.write_text(TORCHRUN_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
           "--master-port", str(_free_port()), str(script), str(model_dir), str(result)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    solo = make_engine(model_dir, prefix_caching="none")
    params = SamplingParams(temperature=0.0, max_tokens=6)
    want = [
        drive(solo, [Req(p, params, 0)])["0"].outputs[0].token_ids for p in ([5, 6, 7], [9, 10])
    ]
    assert json.loads(result.read_text()) == want


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Spawned workers re-import the main module: a script needs the __main__ guard (as with vLLM).
DRIVER_SCRIPT = """
import sys, time
from reference_engine import LLM
if __name__ == "__main__":
    llm = LLM(model=sys.argv[1], dtype="float64", tensor_parallel_size=2, distributed_timeout_s=60)
    print(" ".join(str(p.pid) for p in llm.engine.runner.procs), flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_workers_exit_when_the_driver_is_killed(random_checkpoint: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "driver.py"
    script.write_text(DRIVER_SCRIPT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(script), str(random_checkpoint("qwen3"))]
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        worker_pid = int(driver.stdout.readline())
        driver.kill()  # SIGKILL: no chance to stop its workers
        driver.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(worker_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker_pid), "the worker outlived its driver"
    finally:
        driver.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False
