"""Stop strings in the stream: cut exactly, never leak a partial stop string."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from reference_engine.detokenizer import IncrementalDetokenizer

CORPUS = [
    "The answer is <answer>42</answer> and nothing else. END of story.",
    "Ünïcödé façade, 你好世界, emoji 🙂🚀 and more text to merge pairs.",
]
ALPHABET = "ab 你🙂é<>/\n"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    """Byte-level BPE small enough that words and characters span tokens."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS * 5, trainer)
    return tokenizer


def _first_completed(text: str, stops: list[str]) -> tuple[str, int, int] | None:
    """Brute force: the stop string occurrence a left-to-right reader meets first."""
    for end in range(1, len(text) + 1):
        hits = [s for s in stops if text[:end].endswith(s)]
        if hits:
            best = max(hits, key=len)
            return best, end - len(best), end
    return None


def _stream(
    tok: Tokenizer, ids: list[int], stops: list[str], include: bool = False, chunk: int = 1
) -> tuple[list[str], int, str | None]:
    """Deltas, how many tokens were consumed, and the stop string that ended it."""
    detok = IncrementalDetokenizer(tok, stop=stops, include_stop_str_in_output=include)
    deltas = []
    for start in range(0, len(ids), chunk):
        end = min(start + chunk, len(ids))
        update = detok.update(ids[start:end], finished=end == len(ids))
        deltas.append(update.text_delta)
        if update.stop_string is not None:
            assert detok.finished and detok.stop_string == update.stop_string
            return deltas, end, update.stop_string
    return deltas, len(ids), None


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet=ALPHABET, max_size=40),
    stops=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
    include=st.booleans(),
    chunk=st.sampled_from([1, 1, 2, 3]),
)
def test_stop_strings_cut_exactly_and_never_leak(
    tok: Tokenizer, text: str, stops: list[str], include: bool, chunk: int
) -> None:
    """Token by token (as the engine feeds it) and in chunks of a few tokens."""
    ids = tok.encode(text).ids
    match = _first_completed(text, stops)
    if match is None:
        final = text
    else:
        final = text[: match[2]] if include else text[: match[1]]

    deltas, consumed, stop_string = _stream(tok, ids, stops, include, chunk)
    streamed = ""
    for delta in deltas:
        streamed += delta
        # Every intermediate stream is a prefix of the final text: nothing
        # streamed is ever taken back, so no partial stop string leaked.
        assert final.startswith(streamed)
    assert streamed == final
    assert stop_string == (None if match is None else match[0])
    if match is not None and chunk == 1:
        # It stops on the very token whose text completes the stop string.
        decoded_upto = [tok.decode(ids[:k]) for k in range(1, len(ids) + 1)]
        first_k = next(k for k, s in enumerate(decoded_upto, start=1) if _first_completed(s, stops))
        assert consumed == first_k


def test_tag_split_over_tokens_is_cut_before_it(tok: Tokenizer) -> None:
    text = "The answer is <answer>42</answer> and nothing else."
    ids = tok.encode(text).ids
    deltas, _, stop = _stream(tok, ids, ["</answer>"])
    assert stop == "</answer>"
    assert "".join(deltas) == "The answer is <answer>42"
    assert not any("</" in d for d in deltas)


def test_held_back_prefix_is_released_when_it_turns_out_harmless(tok: Tokenizer) -> None:
    text = "a <ans b <answer>"
    ids = tok.encode(text).ids
    deltas, _, stop = _stream(tok, ids, ["<answer>x"])
    assert stop is None
    assert "".join(deltas) == text  # held back at the end, flushed when finished


def test_stop_at_the_very_start_gives_empty_text(tok: Tokenizer) -> None:
    deltas, _, stop = _stream(tok, tok.encode("你好 world").ids, ["你"])
    assert stop == "你"
    assert deltas == [""] * len(deltas)


def test_multibyte_stop_string_split_across_byte_tokens(tok: Tokenizer) -> None:
    text = "ab🚀cd"
    ids = tok.encode(text).ids
    assert len(ids) > 4  # the rocket alone spans several byte tokens
    deltas, _, stop = _stream(tok, ids, ["🚀c"], include=True)
    assert stop == "🚀c"
    assert "".join(deltas) == "ab🚀c"
