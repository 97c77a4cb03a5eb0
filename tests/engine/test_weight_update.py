"""Live weight updates (reference_engine/weight_update.py).

After an update the engine generates exactly what a fresh engine loaded with the new weights
generates; the prefix cache forgets KV of the old weights; every output names its weight
version; in-flight requests follow the policy; a bad update is refused and the old weights
keep serving; a trainer process drives several update-and-generate rounds over
torch.distributed.
"""

from __future__ import annotations

import multiprocessing as mp
import socket
from pathlib import Path
from typing import Any

import pytest
from safetensors.torch import load_file

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine
from reference_engine.sampling_params import SamplingParams
from reference_engine.weight_update import WeightUpdateError

PROMPTS = [[5, 9, 3, 7, 11, 2, 8, 40, 41, 42], [100, 3, 77], [6, 6, 6, 6, 6, 6, 6, 6, 9]]


def _engine(folder: Path, **kw: Any) -> Engine:
    return Engine(EngineConfig(model=str(folder), dtype="float64", block_size=4, **kw))


def _generate(engine: Engine, prompts: list[list[int]], n: int = 8) -> tuple[list[list[int]], set[str]]:
    params = SamplingParams(temperature=0.0, max_tokens=n, ignore_eos=True)
    for i, p in enumerate(prompts):
        engine.add_request(f"r{i}-{engine._num_steps}", p, params)
    finals, versions = {}, set()
    while engine.has_unfinished_requests():
        for out in engine.step():
            versions.add(out.weight_version)
            if out.finished:
                finals[out.request_id] = out.outputs[0].token_ids
    return [finals[k] for k in sorted(finals, key=lambda r: int(r[1:].split("-")[0]))], versions


@pytest.fixture(scope="module")
def folders(random_checkpoint) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64", seed=0), random_checkpoint(
        "qwen3", dtype="float64", seed=1
    )


def test_update_from_disk_equals_a_fresh_engine(folders: tuple[Path, Path]) -> None:
    old, new = folders
    engine = _engine(old)
    before, versions = _generate(engine, PROMPTS)
    assert versions == {"default"}
    _generate(engine, PROMPTS)  # the prompts' blocks now sit in the prefix cache
    result = engine.weights.update_from_disk(new, version="rl-step-1")
    assert result.version == "rl-step-1" and engine.kv.cache.num_evictable_blocks() == 0
    after, versions = _generate(engine, PROMPTS)
    fresh, _ = _generate(_engine(new), PROMPTS)
    assert after == fresh and after != before
    assert versions == {"rl-step-1"}
    # And back, from tensors in memory this time.
    tensors = load_file(str(old / "model.safetensors"))
    engine.weights.update_from_tensors(tensors.items())
    assert _generate(engine, PROMPTS) == (before, {"v2"})


def test_bad_updates_are_refused_and_old_weights_keep_serving(
    folders: tuple[Path, Path], random_checkpoint, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    old, new = folders
    engine = _engine(old)
    before, _ = _generate(engine, PROMPTS)
    good = load_file(str(new / "model.safetensors"))
    name = "model.layers.1.mlp.down_proj.weight"
    missing = {k: v for k, v in good.items() if k != name}
    cases = {
        "lacks 1 tensors": missing.items(),
        "shape": {**good, name: good[name][:, :-1]}.items(),
        "torch.float32": {**good, name: good[name].float()}.items(),
        "has no place": {**good, "model.layers.9.mlp.up_proj.weight": good[name]}.items(),
    }
    for message, tensors in cases.items():
        with pytest.raises(WeightUpdateError, match=message):
            engine.weights.update_from_tensors(tensors)
        assert _generate(engine, PROMPTS) == (before, {"default"})
    other = random_checkpoint("llama", dtype="float64")
    with pytest.raises(WeightUpdateError, match="differs"):
        engine.weights.update_from_disk(other)
    with pytest.raises(WeightUpdateError, match=r"config\.json"):
        engine.weights.update_from_disk(tmp_path)
    assert _generate(engine, PROMPTS) == (before, {"default"})


def test_in_flight_policies(folders: tuple[Path, Path]) -> None:
    old, new = folders
    params = SamplingParams(temperature=0.0, max_tokens=10, ignore_eos=True)
    engine = _engine(old, prefix_caching="radix")
    engine.add_request("a", PROMPTS[0], params)
    engine.add_request("b", PROMPTS[1], params)
    seen: dict[str, list[tuple[list[int], str]]] = {"a": [], "b": []}
    for _ in range(4):
        for out in engine.step():
            seen[out.request_id].append((out.outputs[0].token_ids_delta, out.weight_version))
    with pytest.raises(WeightUpdateError, match="in flight"):
        engine.weights.update_from_disk(new)
    result = engine.weights.update_from_disk(new, version="new", policy="recompute")
    assert result.num_recomputed == 2
    finals = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            seen[out.request_id].append((out.outputs[0].token_ids_delta, out.weight_version))
            if out.finished:
                finals[out.request_id] = out.outputs[0].token_ids
    fresh = _engine(new)
    for rid, prompt in (("a", PROMPTS[0]), ("b", PROMPTS[1])):
        old_part = [t for delta, v in seen[rid] if v == "default" for t in delta]
        assert old_part and finals[rid][: len(old_part)] == old_part
        # The rest is what the new weights generate after prompt + the old tokens.
        rest = SamplingParams(temperature=0.0, max_tokens=10 - len(old_part), ignore_eos=True)
        fresh.add_request(rid, prompt + old_part, rest)
        while fresh.has_unfinished_requests():
            for out in fresh.step():
                if out.finished:
                    assert finals[rid][len(old_part) :] == out.outputs[0].token_ids
    engine.add_request("c", PROMPTS[2], params)
    engine.step()
    result = engine.weights.update_from_disk(old, policy="abort")
    assert result.num_aborted == 1 and not engine.has_unfinished_requests()
    assert engine.kv.is_idle_clean()


@pytest.mark.slow
def test_trainer_process_drives_rounds_over_torch_distributed(
    folders: tuple[Path, Path], tmp_path: Path
) -> None:
    from weight_trainer import run_trainer

    old, _ = folders
    engine = _engine(old)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    trainer = ctx.Process(target=run_trainer, args=(str(old), str(tmp_path), port, 3, theirs))
    trainer.start()
    try:
        engine.weights.init_group("127.0.0.1", port, rank=1, world_size=2, timeout_s=60)
        rounds = 0
        while True:
            assert ours.poll(120), "the trainer went quiet"
            msg = ours.recv()
            if msg[0] == "stop":
                break
            _, meta, folder, version = msg
            engine.weights.update_from_distributed(
                meta["names"], meta["dtypes"], meta["shapes"], version=version
            )
            ours.send(("updated", version))
            got, versions = _generate(engine, PROMPTS)
            want, _ = _generate(_engine(Path(folder)), PROMPTS)
            assert got == want and versions == {version}
            rounds += 1
        assert rounds == 3
    finally:
        trainer.join(timeout=60)
        if trainer.is_alive():
            trainer.kill()
    assert trainer.exitcode == 0
    with pytest.raises(WeightUpdateError, match="already joined"):
        engine.weights.init_group("127.0.0.1", port, rank=1, world_size=2)


@pytest.mark.parametrize("scheme", ["int8", "fp8"])
def test_quantized_engine_takes_float_updates(folders: tuple[Path, Path], scheme: str) -> None:
    """Low-precision rollouts behind a full-precision trainer: float weights in, quantized by
    the serving layers, the same as a fresh engine quantizing the new checkpoint on load."""
    old, new = folders
    engine = _engine(old, quantization=scheme)
    before, _ = _generate(engine, PROMPTS)
    engine.weights.update_from_tensors(load_file(str(new / "model.safetensors")).items())
    after, versions = _generate(engine, PROMPTS)
    assert (after, versions) == (_generate(_engine(new, quantization=scheme), PROMPTS)[0], {"v1"})
    assert after != before
    bad = load_file(str(new / "model.safetensors"))
    bad["model.layers.0.mlp.up_proj.weight"] = bad["model.layers.0.mlp.up_proj.weight"][:-1]
    with pytest.raises(WeightUpdateError, match="up_proj"):
        engine.weights.update_from_tensors(bad.items())
    assert _generate(engine, PROMPTS)[0] == after
