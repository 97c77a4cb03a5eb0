"""Incremental detokenizer against real `tokenizers` tokenizers trained here.

A byte-level BPE with a small vocabulary splits emoji, CJK and accented
letters into several byte tokens, and merges other pieces across characters:
exactly the cases where naive per-token decoding breaks.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from reference_engine.detokenizer import IncrementalDetokenizer, decode_token

FFFD = "\ufffd"
SPECIALS = ["<|endoftext|>", "<|im_end|>"]
CORPUS = [
    "Hello world, the café serves crème brûlée to naïve visitors. Ünïcödé façade.",
    "你好，世界！今天天气很好。我们一起学习机器学习。",
    "Emoji time 🙂🚀🎉 and 👍🏽 thumbs, 👨‍👩‍👧 family, ❤️ hearts.",
    "Grüße aus Köln, señor Muñoz; Ελληνικά και Русский текст.",
    "stop words END and </answer> tags appear in text too.",
]
# Characters for random texts: 1-, 2-, 3- and 4-byte UTF-8, plus a zero-width joiner.
ALPHABET = "ab é€你好🙂🚀👍🏽\u200d<>/ENDxyz\n"


def _train(pre_tokenizer: object, decoder: object, vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoder
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 5, trainer)
    return tok


@pytest.fixture(scope="module")
def byte_bpe() -> Tokenizer:
    return _train(pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel(), 340)


@pytest.fixture(scope="module")
def metaspace_bpe() -> Tokenizer:
    """SentencePiece-like (Llama-2 style): '▁' marks spaces, decoding drops a
    leading space, and characters outside the vocabulary fall back to <0xNN>
    byte tokens, which are ordinary (not special) vocabulary entries."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", *SPECIALS], show_progress=False
    )
    tok.train_from_iterator(CORPUS * 5, trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    return Tokenizer.from_str(json.dumps(spec))


def _stream(
    tok: Tokenizer, ids: list[int], chunk: int = 1, **kwargs: object
) -> tuple[list[str], IncrementalDetokenizer]:
    """Feed `ids` `chunk` at a time; the last call says finished."""
    detok = IncrementalDetokenizer(tok, **kwargs)  # type: ignore[arg-type]
    deltas = []
    for start in range(0, len(ids), chunk):
        last = start + chunk >= len(ids)
        deltas.append(detok.update(ids[start : start + chunk], finished=last).text_delta)
        if detok.finished:
            break
    return deltas, detok


def test_tokenizer_really_splits_characters(byte_bpe: Tokenizer) -> None:
    ids = byte_bpe.encode("🚀你é").ids
    pieces = [byte_bpe.decode([i]) for i in ids]
    assert any(FFFD in p for p in pieces), "test tokenizer should split multi-byte characters"


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet=ALPHABET, max_size=40))
def test_stream_equals_decode_at_every_full_character(byte_bpe: Tokenizer, text: str) -> None:
    ids = byte_bpe.encode(text).ids
    detok = IncrementalDetokenizer(byte_bpe)
    streamed = ""
    for k, token in enumerate(ids, start=1):
        delta = detok.update([token], finished=k == len(ids)).text_delta
        assert FFFD not in delta
        streamed += delta
        # Everything but an unfinished last character is out already.
        assert streamed == byte_bpe.decode(ids[:k]).rstrip(FFFD)
    assert streamed == text == detok.output_text


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), chunk=st.integers(1, 4))
def test_random_ids_decode_to_the_same_text(
    byte_bpe: Tokenizer, data: st.DataObject, chunk: int
) -> None:
    """Arbitrary id sequences (including invalid UTF-8) and multi-token updates."""
    vocab = byte_bpe.get_vocab_size()
    ids = data.draw(st.lists(st.integers(len(SPECIALS), vocab - 1), min_size=1, max_size=30))
    deltas, _ = _stream(byte_bpe, ids, chunk=chunk)
    full = byte_bpe.decode(ids)
    assert "".join(deltas) == full
    if FFFD not in full:
        assert all(FFFD not in d for d in deltas)


def test_emoji_split_over_tokens_arrives_whole(byte_bpe: Tokenizer) -> None:
    ids = byte_bpe.encode("a👍🏽b").ids
    deltas, _ = _stream(byte_bpe, ids)
    assert "".join(deltas) == "a👍🏽b"
    assert all(FFFD not in d for d in deltas)
    assert "" in deltas  # some tokens had to wait for the rest of their character


@pytest.mark.parametrize("skip", [True, False])
def test_skip_special_tokens(byte_bpe: Tokenizer, skip: bool) -> None:
    end = byte_bpe.token_to_id("<|im_end|>")
    ids = [*byte_bpe.encode("你好").ids, end, *byte_bpe.encode(" café").ids, end]
    deltas, _ = _stream(byte_bpe, ids, skip_special_tokens=skip)
    assert "".join(deltas) == byte_bpe.decode(ids, skip_special_tokens=skip)
    assert ("<|im_end|>" in "".join(deltas)) is not skip


def test_prompt_context_does_not_change_byte_level_text(byte_bpe: Tokenizer) -> None:
    prompt = byte_bpe.encode("Grüße 🙂 ").ids
    out = byte_bpe.encode("你好 world").ids
    deltas, _ = _stream(byte_bpe, out, prompt_token_ids=prompt)
    assert "".join(deltas) == "你好 world"


def test_prompt_cut_mid_character_falls_back_to_no_context(byte_bpe: Tokenizer) -> None:
    ids = byte_bpe.encode("ok🚀").ids
    assert byte_bpe.decode(ids[:-1]).endswith(FFFD)
    deltas, _ = _stream(byte_bpe, byte_bpe.encode("fine").ids, prompt_token_ids=ids[:-1])
    assert "".join(deltas) == "fine"


def test_metaspace_tokenizer_uses_byte_fallback(metaspace_bpe: Tokenizer) -> None:
    tokens = metaspace_bpe.encode("🦀龍").tokens
    assert "<0xF0>" in tokens
    assert metaspace_bpe.decode(metaspace_bpe.encode("a 🦀龍").ids) == "a 🦀龍"


def test_metaspace_keeps_the_leading_space_after_a_prompt(metaspace_bpe: Tokenizer) -> None:
    prompt = metaspace_bpe.encode("Hello").ids
    out = metaspace_bpe.encode("world café").ids
    # Alone, the decoder strips the first "▁"; after the prompt it is a real space.
    assert metaspace_bpe.decode(out) == "world café"
    deltas, _ = _stream(metaspace_bpe, out, prompt_token_ids=prompt)
    assert "".join(deltas) == " world café"
    # Without context the stream equals a plain decode.
    deltas, _ = _stream(metaspace_bpe, out)
    assert "".join(deltas) == "world café"


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet="ab 你🙂éxyz🦀龍", max_size=30))
def test_metaspace_byte_fallback_streams_whole_characters(
    metaspace_bpe: Tokenizer, text: str
) -> None:
    ids = metaspace_bpe.encode(text).ids
    prompt = metaspace_bpe.encode("Hi").ids
    deltas, _ = _stream(metaspace_bpe, ids, prompt_token_ids=prompt)
    expected = metaspace_bpe.decode(prompt + ids)[len(metaspace_bpe.decode(prompt)) :]
    assert "".join(deltas) == expected
    assert all(FFFD not in d for d in deltas)


def test_finished_detokenizer_ignores_more_tokens(byte_bpe: Tokenizer) -> None:
    detok = IncrementalDetokenizer(byte_bpe)
    detok.update(byte_bpe.encode("hi").ids, finished=True)
    update = detok.update(byte_bpe.encode("more").ids)
    assert update.text_delta == "" and update.finished
    assert detok.output_text == "hi"


def test_unfinished_character_is_flushed_at_the_end(byte_bpe: Tokenizer) -> None:
    ids = byte_bpe.encode("a🚀").ids[:-1]  # the rocket's last byte never comes
    deltas, _ = _stream(byte_bpe, ids)
    assert "".join(deltas) == byte_bpe.decode(ids)
    assert "".join(deltas).startswith("a") and "".join(deltas).endswith(FFFD)


def test_decode_token_shows_special_tokens(byte_bpe: Tokenizer) -> None:
    assert decode_token(byte_bpe, byte_bpe.token_to_id("<|im_end|>")) == "<|im_end|>"


@pytest.fixture(scope="module")
def tiny_model_tokenizer() -> Tokenizer:
    from reference_engine.tiny_model import build_tokenizer

    return build_tokenizer()


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet=ALPHABET + "Qwen3 <|im_start|>", max_size=40))
def test_built_in_tiny_model_tokenizer_streams_whole_characters(
    tiny_model_tokenizer: Tokenizer, text: str
) -> None:
    """The tokenizer the default model ships with, fed one token at a time."""
    ids = tiny_model_tokenizer.encode(text).ids
    deltas, _ = _stream(tiny_model_tokenizer, ids, skip_special_tokens=False)
    assert "".join(deltas) == tiny_model_tokenizer.decode(ids, skip_special_tokens=False)
    assert all(FFFD not in d for d in deltas)


def test_annotate_logprobs_fills_token_texts(byte_bpe: Tokenizer) -> None:
    from reference_engine.detokenizer import annotate_logprobs
    from reference_engine.sampler import Logprob

    cafe = byte_bpe.encode(" café").ids
    end = byte_bpe.token_to_id("<|im_end|>")
    entry = annotate_logprobs(byte_bpe, {cafe[0]: Logprob(-0.1, 1), end: Logprob(-3.0, 2)})
    assert entry[end].decoded_token == "<|im_end|>"
    assert entry[cafe[0]].decoded_token == byte_bpe.decode([cafe[0]])
