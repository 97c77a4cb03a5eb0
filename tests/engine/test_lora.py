"""Multi-LoRA: PEFT adapters served in slots, a different adapter per row of one batch.

Oracle: peft (test-only) builds and saves each adapter, and its merged model
(`merge_and_unload`, the adapter folded into the weights) gives the logits every row of a
mixed batch must match. Then whole workloads mixing adapters and the base model through the
engine (fewer slots than adapters: LRU loading and eviction, the scheduler's max_loras)
give each request the tokens it gets alone.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import torch

from reference_engine.config import ConfigError, EngineConfig
from reference_engine.engine import Engine, RequestError
from reference_engine.forward_batch import SeqInput, build_forward_batch
from reference_engine.loader import load_model_config
from reference_engine.lora import LoRARequest
from reference_engine.lora.adapter import LoRAError
from reference_engine.lora.manager import LoRAManager
from reference_engine.lora.punica import bgmv, sgmv
from reference_engine.model_runner import ModelRunner
from reference_engine.sampling_params import SamplingParams

transformers = pytest.importorskip("transformers")
peft = pytest.importorskip("peft")

ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# name -> (rank, alpha, targets, rslora, seed)
ADAPTERS = {
    "a": (4, 8, ALL, False, 1),
    "b": (8, 4, ["q_proj", "v_proj", "down_proj"], True, 2),
    "c": (2, 2, ["o_proj", "gate_proj", "up_proj"], False, 3),
}


def _hf(model_dir: Path) -> torch.nn.Module:
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    model.config._attn_implementation = "eager"
    return model.eval()


@pytest.fixture(scope="module")
def lora_setup(random_checkpoint, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The base folder, adapter folders, and each adapter's merged model (the oracle)."""
    base = random_checkpoint("qwen3", dtype="float64")
    root = tmp_path_factory.mktemp("loras")
    folders, merged = {}, {}
    for name, (r, alpha, targets, rslora, seed) in ADAPTERS.items():
        torch.manual_seed(seed)
        cfg = peft.LoraConfig(
            r=r, lora_alpha=alpha, target_modules=targets, use_rslora=rslora,
            init_lora_weights=False, lora_dropout=0.0,
        )  # fmt: skip
        model = peft.get_peft_model(_hf(base), cfg)
        with torch.no_grad():  # peft's random B is small; make each delta clearly visible
            for pname, p in model.named_parameters():
                if "lora_B" in pname:
                    p.mul_(20.0)
        model.save_pretrained(root / name)
        merged[name] = model.merge_and_unload().eval()
    merged[None] = _hf(base)
    return base, folders | {n: root / n for n in ADAPTERS}, merged


def _oracle(model: torch.nn.Module, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0]


def test_punica_kernels_match_a_per_row_loop() -> None:
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 4, 16, generator=gen), torch.randn(3, 24, 4, generator=gen)
    x = torch.randn(9, 16, generator=gen)
    slots = [0, 0, 0, -1, 2, 2, 1, -1, 0]
    want = torch.stack(
        [b[s] @ (a[s] @ x[i]) if s >= 0 else torch.zeros(24) for i, s in enumerate(slots)]
    )
    y = torch.zeros(9, 24)
    sgmv(y, x, a, b, [(0, 3, 0), (3, 4, -1), (4, 6, 2), (6, 7, 1), (7, 8, -1), (8, 9, 0)])
    torch.testing.assert_close(y, want)
    y = torch.zeros(9, 24)
    bgmv(y, x, a, b, torch.tensor(slots))
    torch.testing.assert_close(y, want)


def test_mixed_batch_logits_equal_peft_merged_models(lora_setup) -> None:  # type: ignore[no-untyped-def]
    base, folders, merged = lora_setup
    cfg = EngineConfig(model=str(base), dtype="float64", num_gpu_blocks=64, block_size=4)
    runner = ModelRunner(load_model_config(cfg), cfg)
    manager = LoRAManager(runner.model, max_loras=3, max_lora_rank=8, device=runner.device,
                          dtype=runner.dtype)  # fmt: skip
    for name, folder in folders.items():
        manager.add_lora(LoRARequest(name, ord(name), str(folder)))
    rng = random.Random(0)
    names = ["a", None, "b", "b", "c", "a"]
    seqs = [[rng.randrange(500) for _ in range(rng.randrange(3, 12))] for _ in names]
    tables, nxt = [], 0
    for s in seqs:
        n = -(-len(s) // 4)
        tables.append(list(range(nxt, nxt + n)))
        nxt += n
    batch = build_forward_batch(
        [SeqInput(s, 0, t, want_prompt_logits=True) for s, t in zip(seqs, tables, strict=True)], 4
    )
    manager.prepare_batch(names, batch.query_lens_cpu)
    logits = runner.execute_model(batch)
    for i, (name, s) in enumerate(zip(names, seqs, strict=True)):
        rows = logits[batch.logits_start_loc[i] : batch.logits_start_loc[i + 1]]
        want = _oracle(merged[name], s)
        # transformers rotates and normalises in float32 even in a float64 model (see
        # test_model_hf_oracle.py); an adapter moves logits by far more than that.
        torch.testing.assert_close(rows, want, rtol=1e-5, atol=5e-5)
        if name is not None:
            assert float((want - _oracle(merged[None], s)).abs().max()) > 0.1
    # Decode-shaped batch (one row per sequence): the BGMV path.
    last = [SeqInput(s[-1:], len(s) - 1, t) for s, t in zip(seqs, tables, strict=True)]
    batch = build_forward_batch(last, 4)
    manager.prepare_batch(names, batch.query_lens_cpu)
    logits = runner.execute_model(batch)
    for i, (name, s) in enumerate(zip(names, seqs, strict=True)):
        torch.testing.assert_close(logits[i], _oracle(merged[name], s)[-1], rtol=1e-5, atol=5e-5)


@pytest.mark.parametrize("cache", ["hash", "radix"])
def test_workloads_mixing_adapters_equal_solo_runs(lora_setup, cache: str) -> None:  # type: ignore[no-untyped-def]
    base, folders, _ = lora_setup
    requests = {n: LoRARequest(n, i + 1, str(folders[n])) for i, n in enumerate(folders)}
    rng = random.Random(5)
    # Shared prefixes under different adapters: each adapter's cached KV must stay its own.
    prefixes = [[rng.randrange(500) for _ in range(9)] for _ in range(2)]
    work = []
    for i in range(16):
        name = rng.choice(["a", "b", "c", None])
        prompt = rng.choice(prefixes) + [rng.randrange(500) for _ in range(rng.randrange(1, 8))]
        work.append((str(i), prompt, name, rng.randrange(2, 10)))

    def engine(**kw: object) -> Engine:
        return Engine(EngineConfig(model=str(base), dtype="float64", block_size=4,
                                   enable_lora=True, max_lora_rank=8, **kw))  # type: ignore[arg-type]

    def run(eng: Engine, items: list[tuple[str, list[int], str | None, int]],
            one_by_one: bool) -> dict[str, Any]:  # fmt: skip
        got: dict[str, Any] = {}
        pending = list(items)
        while pending or eng.has_unfinished_requests():
            if pending and (not one_by_one or not eng.has_unfinished_requests()):
                rid, prompt, name, n = pending.pop(0)
                params = SamplingParams(temperature=0.0, max_tokens=n, ignore_eos=True)
                eng.add_request(rid, prompt, params, lora_request=requests[name] if name else None)
                if not one_by_one and pending and rng.random() < 0.6:
                    continue  # several arrive in the same step
            for out in eng.step():
                if out.finished:
                    got[out.request_id] = out
        return got

    want = run(engine(max_loras=1, prefix_caching="none"), work, one_by_one=True)
    # Two slots for three adapters, a small step budget: chunked prefills, LRU swaps.
    mixed = engine(max_loras=2, max_num_batched_tokens=16, max_num_seqs=6, prefix_caching=cache)
    adapters_per_step: list[int] = []
    real_step = mixed.step

    def counting_step() -> list[Any]:
        adapters_per_step.append(len({s.lora_name for s in mixed.scheduler.running
                                      if s.lora_name}))  # fmt: skip
        return real_step()

    mixed.step = counting_step  # type: ignore[method-assign]
    got = run(mixed, work, one_by_one=False)
    assert {k: o.outputs[0].token_ids for k, o in got.items()} == {
        k: o.outputs[0].token_ids for k, o in want.items()
    }
    assert max(adapters_per_step) <= 2
    # three adapters went through two slots: at least one was evicted for another
    assert mixed.lora is not None and mixed.lora.num_slot_loads >= 3
    # Adapter requests took prefix-cache hits too (from earlier requests of their adapter).
    hits = [o.num_cached_tokens for k, o in got.items() if work[int(k)][2] is not None]
    assert max(hits) > 0
    # And the adapters really change the output: the base model disagrees with some.
    base_only = run(engine(prefix_caching="none"),
                    [(r, p, None, n) for r, p, name, n in work if name], one_by_one=True)  # fmt: skip
    changed = sum(o.outputs[0].token_ids != want[k].outputs[0].token_ids
                  for k, o in base_only.items())  # fmt: skip
    assert changed >= 3


def test_bad_adapters_are_clear_errors(lora_setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base, folders, _ = lora_setup
    eng = Engine(EngineConfig(model=str(base), dtype="float64", enable_lora=True, max_lora_rank=4))
    with pytest.raises(RequestError, match=r"rank 8, above max_lora_rank=4"):
        eng.add_lora(LoRARequest("b", 2, str(folders["b"])))
    with pytest.raises(RequestError, match=r"no adapter_config\.json"):
        eng.add_request("x", [1, 2], lora_request=LoRARequest("nope", 9, str(tmp_path)))
    assert not eng.has_unfinished_requests()
    bad = tmp_path / "dora"
    bad.mkdir()
    cfg = json.loads((folders["a"] / "adapter_config.json").read_text())
    (bad / "adapter_config.json").write_text(json.dumps({**cfg, "use_dora": True}))
    with pytest.raises(LoRAError, match="use_dora"):
        eng.lora.add_lora(LoRARequest("dora", 3, str(bad)))  # type: ignore[union-attr]
    plain = Engine(EngineConfig(model=str(base), dtype="float64"))
    with pytest.raises(RequestError, match="enable_lora"):
        plain.add_request("y", [1, 2], lora_request=LoRARequest("a", 1, str(folders["a"])))
    with pytest.raises(ConfigError, match="max_loras"):
        EngineConfig(max_loras=0)


def test_llm_generate_takes_lora_requests(lora_setup) -> None:  # type: ignore[no-untyped-def]
    from reference_engine.llm import LLM

    base, folders, _ = lora_setup
    llm = LLM(str(base), dtype="float64", enable_lora=True, max_loras=2, max_lora_rank=8)
    a = LoRARequest("a", 1, str(folders["a"]))
    params = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)
    mixed = llm.generate([[5, 6, 7], [5, 6, 7]], params, lora_request=[a, None])
    solo_a = llm.generate([[5, 6, 7]], params, lora_request=a)
    solo_base = llm.generate([[5, 6, 7]], params)
    assert mixed[0].outputs[0].token_ids == solo_a[0].outputs[0].token_ids
    assert mixed[1].outputs[0].token_ids == solo_base[0].outputs[0].token_ids
    with pytest.raises(ValueError, match="2 LoRA requests for 1 prompts"):
        llm.generate([[1, 2]], params, lora_request=[a, a])


def test_adapters_on_a_quantized_base(lora_setup) -> None:  # type: ignore[no-untyped-def]
    """LoRA deltas add onto quantized projections too (the hooks sit on QuantizedLinear)."""
    from reference_engine.llm import LLM

    base, folders, merged = lora_setup
    llm = LLM(str(base), dtype="float64", quantization="int8", enable_lora=True,
              max_loras=2, max_lora_rank=8)  # fmt: skip
    a = LoRARequest("a", 1, str(folders["a"]))
    params = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)
    prompts = [[5, 6, 7, 8], [9, 10, 11], [5, 6, 7, 8]]
    mixed = llm.generate(prompts, params, lora_request=[a, None, None])
    alone = [llm.generate([p], params, lora_request=r)[0] for p, r in zip(prompts, [a, None, None],
                                                                         strict=True)]  # fmt: skip
    assert [o.outputs[0].token_ids for o in mixed] == [o.outputs[0].token_ids for o in alone]
    assert mixed[0].outputs[0].token_ids != mixed[2].outputs[0].token_ids
    # int8 weights plus the adapter stay close to peft's float merged model.
    ids = prompts[0] + mixed[0].outputs[0].token_ids[:-1]
    with torch.no_grad():
        want = merged["a"](torch.tensor([ids])).logits[0, -1]
    assert int(want.argmax()) == mixed[0].outputs[0].token_ids[-1]
