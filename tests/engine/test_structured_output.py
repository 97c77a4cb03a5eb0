"""Structured output with xgrammar: every output parses and validates on random JSON
schemas, regexes, EBNF grammars and choices; constrained requests batched with
unconstrained ones leave those untouched; greedy constrained output equals the
unconstrained output wherever that token was allowed; speculative drafts roll back."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import torch

from reference_engine.config import EngineConfig
from reference_engine.engine import Engine, RequestError
from reference_engine.sampling_params import SamplingParams
from reference_engine.structured_output import StructuredOutputsParams
from reference_engine.structured_output.manager import unpack_bitmask


@pytest.fixture(scope="module")
def model_dir(random_checkpoint) -> Path:  # type: ignore[no-untyped-def]
    return random_checkpoint("qwen3", dtype="float64")


def engine_for(model_dir: Path, **kwargs: Any) -> Engine:
    cfg: dict[str, Any] = {"dtype": "float64", "block_size": 4, "num_gpu_blocks": 512}
    return Engine(EngineConfig(model=str(model_dir), **{**cfg, **kwargs}))


def run(engine: Engine, reqs: list[tuple[Any, SamplingParams]]) -> list[Any]:
    for i, (prompt, params) in enumerate(reqs):
        engine.add_request(str(i), prompt, params)
    done: dict[str, Any] = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            if out.finished:
                done[out.request_id] = out
    return [done[str(i)] for i in range(len(reqs))]


def random_schema(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    """Bounded schemas (short strings, small integers, short arrays), so that a random model
    finishes them well within max_tokens."""
    kinds = ["boolean", "enum", "string", "integer", "null"]
    if depth < 2:
        kinds += ["object", "array"]
    kind = rng.choice(kinds)
    if kind == "enum":
        return {"enum": rng.sample(["red", "green", "blue", "x y", 'q"u'], rng.randrange(1, 4))}
    if kind == "string":
        return {"type": "string", "maxLength": rng.randrange(0, 5)}
    if kind == "integer":
        lo = rng.randrange(-50, 50)
        return {"type": "integer", "minimum": lo, "maximum": lo + rng.randrange(0, 100)}
    if kind == "array":
        return {"type": "array", "items": random_schema(rng, depth + 1), "maxItems": rng.randrange(0, 3)}
    if kind == "object":
        names = rng.sample(["id", "name", "ok", "tags", "v"], rng.randrange(1, 4))
        props = {n: random_schema(rng, depth + 1) for n in names}
        return {"type": "object", "properties": props, "required": names,
                "additionalProperties": False}  # fmt: skip
    return {"type": kind}


@pytest.mark.slow
def test_random_json_schemas_validate(model_dir: Path) -> None:
    rng = random.Random("schemas")
    engine = engine_for(model_dir)
    reqs = []
    for i in range(16):
        schema = {"type": "object", "properties": {"a": random_schema(rng), "b": random_schema(rng)},
                  "required": ["a", "b"], "additionalProperties": False}  # fmt: skip
        params = SamplingParams(
            temperature=rng.choice([0.0, 1.0, 3.0]), seed=i, max_tokens=200,
            structured_outputs=StructuredOutputsParams(json=schema),
        )  # fmt: skip
        reqs.append((f"schema {i}:", params))
    for (_, params), out in zip(reqs, run(engine, reqs), strict=True):
        assert out.outputs[0].finish_reason == "stop", out.outputs[0].text
        schema = params.structured_outputs.json  # type: ignore[union-attr]
        jsonschema.validate(json.loads(out.outputs[0].text), schema)
    engine.check_integrity()


def test_regex_choice_grammar_and_json_object(model_dir: Path) -> None:
    engine = engine_for(model_dir)
    S = StructuredOutputsParams
    regex = r"[0-9]{2,4}-(ab|cd)[xyz]?"
    # EBNF with rules and bounded repetition; its language as a regex, to check outputs.
    grammar = 'root ::= "(" num ("+" num){0,2} ")" | "[" word "]"\nnum ::= [0-9]{1,3}\nword ::= [a-z]{2,4}'
    grammar_re = r"\([0-9]{1,3}(\+[0-9]{1,3}){0,2}\)|\[[a-z]{2,4}\]"
    reqs = []
    for i in range(6):
        temp = 0.0 if i % 2 == 0 else 2.0
        reqs += [
            ("r", SamplingParams(temperature=temp, seed=i, max_tokens=20, structured_outputs=S(regex=regex))),
            ("c", SamplingParams(temperature=temp, seed=i, max_tokens=20,
                                 structured_outputs=S(choice=["alpha", "beta", "al"]))),
            ("g", SamplingParams(temperature=temp, seed=i, max_tokens=40, structured_outputs=S(grammar=grammar))),
            ("j", SamplingParams(temperature=temp, seed=i, max_tokens=300,
                                 structured_outputs=S(json_object=True))),
        ]  # fmt: skip
    outs = run(engine, reqs)
    texts = {"r": [], "c": [], "g": [], "j": []}  # type: dict[str, list[str]]
    for (kind, _), out in zip(reqs, outs, strict=True):
        texts[kind].append(out.outputs[0].text)
        if kind != "j":  # a random model may fill any JSON object past max_tokens
            assert out.outputs[0].finish_reason == "stop", (kind, out.outputs[0].text)
    assert all(re.fullmatch(regex, t) for t in texts["r"]), texts["r"]
    assert all(t in ("alpha", "beta", "al") for t in texts["c"])

    assert all(re.fullmatch(grammar_re, t) for t in texts["g"]), texts["g"]
    finished = [t for t, o in zip(texts["j"], outs[3::4], strict=True)
                if o.outputs[0].finish_reason == "stop"]  # fmt: skip
    assert finished and all(isinstance(json.loads(t), dict) for t in finished)


def test_unconstrained_neighbours_unchanged(model_dir: Path) -> None:
    engine = engine_for(model_dir)
    plain = [([7, 8, 9, i], SamplingParams(temperature=t, seed=i, max_tokens=12, ignore_eos=True))
             for i, t in enumerate([0.0, 1.0, 5.0])]  # fmt: skip
    alone = [o.outputs[0].token_ids for o in run(engine, plain)]
    constrained = [("a", SamplingParams(temperature=t, seed=9, max_tokens=30,
                                        structured_outputs=StructuredOutputsParams(regex="[a-f]{5,9}")))
                   for t in (0.0, 2.0)]  # fmt: skip
    mixed = run(engine, [constrained[0], plain[0], plain[1], constrained[1], plain[2]])
    assert [o.outputs[0].token_ids for o in (mixed[1], mixed[2], mixed[4])] == alone


def test_greedy_constrained_equals_unconstrained_where_allowed(model_dir: Path) -> None:
    """At every position, if the unconstrained argmax was allowed by the grammar, the
    constrained engine chose it; the bitmask only removes tokens."""
    engine = engine_for(model_dir)
    prompt = engine.tokenizer.encode("The answer is")
    S = StructuredOutputsParams
    for constraint in (S(regex="[a-z ]{3,20}"), S(json={"type": "object", "properties": {
            "k": {"type": "string", "maxLength": 6}}, "required": ["k"]})):  # fmt: skip
        out = run(engine, [(prompt, SamplingParams(temperature=0.0, max_tokens=40,
                                                   structured_outputs=constraint))])[0]  # fmt: skip
        tokens = out.outputs[0].token_ids
        # Unconstrained argmax at each position: rank-1 prompt logprobs of prompt + output.
        scored = run(engine, [(prompt + tokens, SamplingParams(max_tokens=1, prompt_logprobs=1))])[0]
        backend = engine.structured.backend
        matcher = backend.matcher(backend.compile(constraint))
        bitmask = backend.allocate_bitmask(1)
        allowed_somewhere = overridden = 0
        for i, token in enumerate(tokens):
            entry = scored.prompt_logprobs[len(prompt) + i]
            best = next(t for t, lp in entry.items() if lp.rank == 1)
            matcher.fill_next_token_bitmask(bitmask, 0)
            allowed = unpack_bitmask(bitmask, engine.model_config.vocab_size)[0]
            if bool(allowed[best]):
                allowed_somewhere += 1
                assert token == best, f"position {i}"
            else:
                overridden += 1
                assert bool(allowed[token])
            assert matcher.accept_token(token)
        assert allowed_somewhere > 0 and overridden > 0


def test_speculative_drafts_roll_back_the_matcher(model_dir: Path) -> None:
    """n-gram drafts (often against the grammar) verified under a constraint: the same
    tokens as without speculation, greedy, chain and tree drafts."""
    constraint = StructuredOutputsParams(regex="(ab|abc|b)+c{0,2}")
    reqs = [("ab ab ab ab", SamplingParams(temperature=0.0, max_tokens=25,
                                           structured_outputs=constraint)),
            ("abcabcabc", SamplingParams(temperature=0.0, max_tokens=25, structured_outputs=constraint))]  # fmt: skip
    plain = [o.outputs[0].token_ids for o in run(engine_for(model_dir), reqs)]
    for width in (1, 3):
        spec = {"method": "ngram", "num_speculative_tokens": 4, "tree_width": width}
        engine = engine_for(model_dir, speculative_config=spec)
        got = [o.outputs[0].token_ids for o in run(engine, reqs)]
        assert got == plain
        stats = engine.stats().spec_decoding
        assert stats is not None and stats.num_accepted_tokens > 0


def test_invalid_constraints_are_request_errors(model_dir: Path) -> None:
    engine = engine_for(model_dir)
    S = StructuredOutputsParams
    for bad, message in [
        (S(json={"type": "frobnicate"}), "invalid json"),
        (S(json="{not json"), "not JSON"),
        (S(regex="[a-"), "invalid regex"),
        (S(grammar="root ::= "), "invalid grammar"),
    ]:
        with pytest.raises(RequestError, match=message):
            engine.add_request("bad", "x", SamplingParams(structured_outputs=bad))
    with pytest.raises(ValueError, match="exactly one"):
        S(regex="a", choice=["b"])
    with pytest.raises(ValueError, match="non-empty"):
        S(choice=[])
    assert not engine.has_unfinished_requests()
    out = run(engine, [("x", SamplingParams(max_tokens=3, structured_outputs=S(choice=["ok"])))])
    assert out[0].outputs[0].text == "ok"


def test_unpack_bitmask() -> None:
    words = torch.tensor([[1 - 2**31, 2]], dtype=torch.int32)  # bits 0 and 31; bit 1
    allowed = unpack_bitmask(words, 40)
    assert allowed[0].nonzero().flatten().tolist() == [0, 31, 33]
