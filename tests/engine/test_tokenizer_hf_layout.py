"""Our tokenizer loading against transformers' `AutoTokenizer`, on folders transformers wrote.

transformers is the oracle: whatever it encodes, decodes or renders from a folder, our
`load_tokenizer(folder)` must reproduce, for both layouts readers meet (the installed 5.x
layout with chat_template.jinja, and the 4.x layout with the template inside
tokenizer_config.json, which Qwen3-0.6B's published folder uses).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import transformers
from hf_checkpoints import CHAT_TEMPLATE, build_hf_model, save_checkpoint, save_tokenizer

from reference_engine import LLM, SamplingParams
from reference_engine.config import ConfigError
from reference_engine.loader import LoadedTokenizer, load_tokenizer

LAYOUTS = ("installed", "legacy")

TEXTS = [
    "Paged attention stores keys and values in blocks.",
    "Größe, naïve café, 東京の夜, привет мир, 😀 👍 — zero-width\u200bjoiner",
    "decomposed e\u0301 is normalised to NFC",  # NFC normaliser: both sides must apply it
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\nplan\n</think>\n\nok",
    "  leading spaces, trailing spaces   \n\n\ttabs and 12345678 digits",
    "text touching specials<|endoftext|>and<|im_end|>",
    "",
]

CONVERSATIONS: list[dict[str, Any]] = [
    {"messages": [{"role": "user", "content": "Hi"}]},
    {
        "messages": [
            {"role": "system", "content": "Answer briefly.  \n"},
            {"role": "user", "content": "  What is a block table?"},
            {"role": "assistant", "content": "<think>\nrecall\n</think>\n\nA map.  "},
            {"role": "user", "content": "And 東京?"},
        ],
        "enable_thinking": False,
    },
    {
        "messages": [
            {"role": "user", "content": "Call the tool"},
            {
                "role": "assistant",
                "content": "<think>\nneeds the tool\n</think>\n\nCalling.",
                "tool_calls": [{"name": "lookup", "arguments": {"key": "naïve 😀"}}],
            },
            {"role": "tool", "content": '{"value": 3}'},
        ],
        "tools": [{"name": "lookup", "parameters": {"key": {"type": "string"}}}],
        "enable_thinking": True,
    },
]


@pytest.fixture(scope="module", params=LAYOUTS)
def folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp(f"tok-{request.param}")
    save_tokenizer(path, request.param)
    return path


def _pair(folder: Path) -> tuple[LoadedTokenizer, Any]:
    return load_tokenizer(folder), transformers.AutoTokenizer.from_pretrained(str(folder))


def test_layouts_are_what_transformers_writes(tmp_path: Path) -> None:
    """Pin down the two layouts, so a transformers upgrade that changes them is noticed."""
    save_tokenizer(tmp_path / "new", "installed")
    save_tokenizer(tmp_path / "old", "legacy")
    new_cfg = json.loads((tmp_path / "new" / "tokenizer_config.json").read_text())
    old_cfg = json.loads((tmp_path / "old" / "tokenizer_config.json").read_text())
    if int(transformers.__version__.split(".")[0]) >= 5:
        assert (tmp_path / "new" / "chat_template.jinja").read_text() == CHAT_TEMPLATE
        assert "chat_template" not in new_cfg
    assert old_cfg["chat_template"] == CHAT_TEMPLATE
    assert not (tmp_path / "old" / "chat_template.jinja").exists()


@pytest.mark.parametrize("text", TEXTS)
def test_encode_decode_match_transformers(folder: Path, text: str) -> None:
    ours, theirs = _pair(folder)
    for add_special in (True, False):
        ids = ours.encode(text, add_special_tokens=add_special)
        assert ids == theirs.encode(text, add_special_tokens=add_special)
    for skip in (True, False):
        assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(
            ids, skip_special_tokens=skip
        )


def test_special_tokens_match_transformers(folder: Path) -> None:
    ours, theirs = _pair(folder)
    assert ours.vocab_size == len(theirs)
    assert ours.eos_token == theirs.eos_token == "<|im_end|>"
    assert ours.eos_token_ids == [theirs.eos_token_id]
    assert ours.bos_token is None and theirs.bos_token is None
    for token in ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"):
        (tid,) = ours.encode(token)
        assert [tid] == theirs.encode(token)
        # ChatML markers are special (dropped by skip_special_tokens); think tags are not.
        assert (tid in ours.special_token_ids) == (
            theirs.decode([tid], skip_special_tokens=True) == ""
        )


def test_partial_utf8_decodes_like_transformers(folder: Path) -> None:
    """Cutting a multi-byte character between tokens (what streaming sees) must give the same
    replacement text on both sides."""
    ours, theirs = _pair(folder)
    ids = ours.encode("東京😀")
    assert len(ids) > 3  # the tiny vocabulary splits these into byte tokens
    for cut in range(1, len(ids)):
        assert ours.decode(ids[:cut]) == theirs.decode(ids[:cut])


@pytest.mark.parametrize("index", range(len(CONVERSATIONS)))
@pytest.mark.parametrize("add_generation_prompt", [True, False])
def test_chat_template_matches_transformers(
    folder: Path, index: int, add_generation_prompt: bool
) -> None:
    ours, theirs = _pair(folder)
    case = dict(CONVERSATIONS[index])
    messages = case.pop("messages")
    want = theirs.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=add_generation_prompt, **case
    )
    got = ours.apply_chat_template(messages, add_generation_prompt=add_generation_prompt, **case)
    assert got == want
    want_ids = theirs.apply_chat_template(
        messages, tokenize=True, add_generation_prompt=add_generation_prompt, **case
    )
    if isinstance(want_ids, dict) or hasattr(want_ids, "input_ids"):
        want_ids = want_ids["input_ids"]
    assert ours.encode(got, add_special_tokens=False) == list(want_ids)


def test_chat_template_switches_change_the_prompt(folder: Path) -> None:
    """The `is defined` switches really act (so the comparisons above are not vacuous)."""
    ours, _ = _pair(folder)
    messages = [{"role": "user", "content": "Hi"}]
    plain = ours.apply_chat_template(messages)
    assert plain.endswith("<|im_start|>assistant\n")
    assert ours.apply_chat_template(messages, enable_thinking=True) == plain
    assert ours.apply_chat_template(messages, enable_thinking=False).endswith(
        "<think>\n\n</think>\n\n"
    )


def test_template_errors_match_transformers(folder: Path) -> None:
    ours, theirs = _pair(folder)
    bad = [{"role": "user", "content": "Hi"}, {"role": "system", "content": "late"}]
    with pytest.raises(ConfigError, match="system messages go first"):
        ours.apply_chat_template(bad)
    with pytest.raises(Exception, match="system messages go first"):
        theirs.apply_chat_template(bad, tokenize=False)


def test_chat_template_jinja_file_wins_like_transformers(tmp_path: Path) -> None:
    """A folder with both (a 4.x tokenizer_config.json and a newer chat_template.jinja):
    transformers renders the .jinja file, so must we."""
    save_tokenizer(tmp_path, "legacy")
    cfg_file = tmp_path / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text())
    cfg["chat_template"] = "OLD {{ messages[0].content }}"
    cfg_file.write_text(json.dumps(cfg))
    (tmp_path / "chat_template.jinja").write_text("NEW {{ messages[0].content }}")
    messages = [{"role": "user", "content": "x"}]
    want = transformers.AutoTokenizer.from_pretrained(str(tmp_path)).apply_chat_template(
        messages, tokenize=False
    )
    assert want == "NEW x"
    assert load_tokenizer(tmp_path).apply_chat_template(messages) == want


# ---------------------------------------------------------------- eos from generation_config


def test_generation_config_eos_list_stops_the_engine(tmp_path: Path) -> None:
    """Qwen3 lists two eos ids in generation_config.json ([<|im_end|>, <|endoftext|>]) but
    only one in config.json; a model that ends a turn with <|endoftext|> must stop there too.

    The check: generate greedily ignoring eos, then declare the 4th generated token an eos
    id in generation_config.json only. The engine must now stop right after emitting it."""
    model = build_hf_model("qwen3", tied=True, seed=3)
    save_checkpoint(model, tmp_path, dtype=model.dtype, sharded=False)
    greedy = SamplingParams(temperature=0.0, max_tokens=12, ignore_eos=True)
    prompt = "The scheduler admits"
    free = LLM(str(tmp_path), num_gpu_blocks=16).generate(prompt, greedy)[0].outputs[0]
    tokens = free.token_ids
    config_eos = json.loads((tmp_path / "config.json").read_text())["eos_token_id"]
    # A token not generated before, so the stop can only happen exactly there.
    stop_at = next(
        i for i, t in enumerate(tokens) if i >= 3 and t != config_eos and t not in tokens[:i]
    )
    gen_file = tmp_path / "generation_config.json"
    gen = json.loads(gen_file.read_text())
    gen["eos_token_id"] = [config_eos, tokens[stop_at]]
    gen_file.write_text(json.dumps(gen))

    params = SamplingParams(temperature=0.0, max_tokens=12)
    out = LLM(str(tmp_path), num_gpu_blocks=16).generate(prompt, params)[0].outputs[0]
    assert out.token_ids == tokens[: stop_at + 1]
    assert out.finish_reason == "stop"


def test_folder_without_chat_template_says_so(tmp_path: Path) -> None:
    save_tokenizer(tmp_path, "installed")
    (tmp_path / "chat_template.jinja").unlink(missing_ok=True)
    tok = load_tokenizer(tmp_path)
    assert tok.chat_template is None
    with pytest.raises(ConfigError, match="no chat template"):
        tok.apply_chat_template([{"role": "user", "content": "x"}])
    shutil.rmtree(tmp_path)


def test_renderer_details_match_transformers(tmp_path: Path) -> None:
    """What transformers hands a template beyond the messages: `tools`/`documents` defined
    (as None) even when not given, tojson's keyword options, message keys whose value is None
    dropped (OpenAI clients send content=None next to tool_calls), named special tokens."""
    save_tokenizer(tmp_path, "installed")
    (tmp_path / "chat_template.jinja").write_text(
        "{{ 'tools:' ~ (tools is none) ~ ' docs:' ~ (documents is none) ~ '\\n' }}"
        "{%- for m in messages %}"
        "{{ m.role }}:{{ m.content if m.content is defined else '(none)' }}"
        "{%- if m.tool_calls is defined %} {{ m.tool_calls | tojson(indent=2, sort_keys=true) }}"
        " {{ m.tool_calls | tojson(separators=(',', ':')) }}{% endif %}\n"
        "{%- endfor %}{{ pad_token }}|{{ eos_token }}"
    )
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "東京?"},
        {"role": "assistant", "content": None, "tool_calls": [{"b": 1, "a": "é"}]},
    ]
    ours, theirs = _pair(tmp_path)
    want = theirs.apply_chat_template(messages, tokenize=False)
    assert ours.apply_chat_template(messages) == want
    assert messages[1]["content"] is None  # the caller's messages are left alone


def test_folder_without_eos_token_loads_like_transformers(tmp_path: Path) -> None:
    """A tokenizer_config.json with no eos_token loads, with no end-of-sequence id (loading
    used to ask the tokenizer for the id of None and fail with a TypeError). transformers'
    Qwen2Tokenizer falls back to a class default eos; ours takes only what the folder says."""
    save_tokenizer(tmp_path, "legacy")
    cfg_file = tmp_path / "tokenizer_config.json"
    cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    cfg.pop("eos_token", None)
    cfg_file.write_text(json.dumps(cfg), encoding="utf-8")
    (tmp_path / "special_tokens_map.json").unlink(missing_ok=True)
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    ours = load_tokenizer(tmp_path)
    assert ours.eos_token is None and ours.eos_token_ids == []
    assert ours.encode("Paged attention") == theirs.encode("Paged attention")
