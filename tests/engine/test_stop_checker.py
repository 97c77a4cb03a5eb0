"""Finish rules: stop tokens, EOS, min/max tokens, max_model_len, stop-string helpers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from reference_engine.detokenizer import IncrementalDetokenizer
from reference_engine.sampling_params import SamplingParams
from reference_engine.stop_checker import (
    StopChecker,
    StopDecision,
    find_stop_string,
    partial_stop_suffix,
)

EOS = 0


@pytest.fixture(scope="module")
def checker() -> StopChecker:
    return StopChecker(max_model_len=20, eos_token_ids=[EOS])


def test_eos_stops_without_a_stop_reason(checker: StopChecker) -> None:
    assert checker.check_tokens(SamplingParams(), 3, [5, EOS]) == StopDecision("stop", None)


def test_ignore_eos_keeps_going(checker: StopChecker) -> None:
    assert checker.check_tokens(SamplingParams(ignore_eos=True), 3, [5, EOS]) is None


def test_stop_token_id_is_the_stop_reason(checker: StopChecker) -> None:
    params = SamplingParams(stop_token_ids=[7, 9])
    assert checker.check_tokens(params, 3, [5, 9]) == StopDecision("stop", 9)
    assert checker.check_tokens(params, 3, [9, 5]) is None  # only the newest token counts


def test_max_tokens_is_a_length_finish(checker: StopChecker) -> None:
    params = SamplingParams(max_tokens=3)
    assert checker.check_tokens(params, 3, [5, 6]) is None
    assert checker.check_tokens(params, 3, [5, 6, 7]) == StopDecision("length")


def test_max_model_len_counts_prompt_and_output(checker: StopChecker) -> None:
    params = SamplingParams(max_tokens=None)
    assert checker.check_tokens(params, 18, [5]) is None
    assert checker.check_tokens(params, 18, [5, 6]) == StopDecision("length")


def test_stop_token_on_the_last_allowed_token_reports_stop(checker: StopChecker) -> None:
    params = SamplingParams(max_tokens=2)
    assert checker.check_tokens(params, 3, [5, EOS]) == StopDecision("stop")


def test_min_tokens_defers_stops_but_not_length(checker: StopChecker) -> None:
    params = SamplingParams(min_tokens=2, stop_token_ids=[9], max_tokens=2)
    assert checker.check_tokens(params, 3, [9]) is None
    assert checker.check_tokens(params, 3, [EOS]) is None
    # The first min_tokens tokens never stop, but max_tokens still ends the request.
    assert checker.check_tokens(params, 3, [5, 9]) == StopDecision("length")
    params = SamplingParams(min_tokens=2, stop_token_ids=[9])
    assert checker.check_tokens(params, 3, [5, 6, 9]) == StopDecision("stop", 9)


def test_no_output_no_decision(checker: StopChecker) -> None:
    assert checker.check_tokens(SamplingParams(), 3, []) is None


def test_bad_max_model_len_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_model_len"):
        StopChecker(max_model_len=0)


def test_merge_prefers_a_stop_string() -> None:
    assert StopChecker.merge(StopDecision("length"), "END") == StopDecision("stop", "END")
    assert StopChecker.merge(StopDecision("length"), None) == StopDecision("length")
    assert StopChecker.merge(None, None) is None


def test_find_stop_string_takes_the_first_to_complete() -> None:
    # "cd" completes at 4, "bcde" at 5: a streaming reader meets "cd" first.
    match = find_stop_string("abcdef", ["bcde", "cd"], 0)
    assert match is not None and (match.stop, match.start, match.end) == ("cd", 2, 4)
    # Same end: the longer (earlier starting) one wins.
    match = find_stop_string("abcdef", ["cd", "bcd"], 0)
    assert match is not None and match.stop == "bcd"
    # Occurrences ending before new_from were already checked.
    assert find_stop_string("xxab", ["x"], 2) is None
    # An occurrence straddling new_from counts.
    match = find_stop_string("xxabyy", ["ab"], 3)
    assert match is not None and match.start == 2
    assert find_stop_string("abc", ["", "zz"], 0) is None


def test_partial_stop_suffix() -> None:
    assert partial_stop_suffix("hello </an", ["</answer>"]) == 4
    assert partial_stop_suffix("hello", ["</answer>"]) == 0
    assert partial_stop_suffix("abab", ["abc", "bab!"]) == 3  # the longest wins
    assert partial_stop_suffix("abc", ["abc"]) == 0  # a whole match is not a partial one
    assert partial_stop_suffix("", ["abc"]) == 0


def _first_completed(text: str, stops: list[str]) -> tuple[str, int, int] | None:
    """Brute force: scan end positions left to right."""
    for end in range(1, len(text) + 1):
        hits = [s for s in stops if s and text[:end].endswith(s)]
        if hits:
            best = max(hits, key=len)
            return best, end - len(best), end
    return None


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abc", max_size=30),
    stops=st.lists(st.text(alphabet="abc", min_size=1, max_size=4), min_size=1, max_size=3),
)
def test_find_stop_string_matches_brute_force(text: str, stops: list[str]) -> None:
    match = find_stop_string(text, stops, 0)
    expected = _first_completed(text, stops)
    got = None if match is None else (match.stop, match.start, match.end)
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="abc", max_size=12),
    stops=st.lists(st.text(alphabet="abc", min_size=1, max_size=5), min_size=1, max_size=3),
)
def test_partial_stop_suffix_matches_brute_force(text: str, stops: list[str]) -> None:
    expected = max((n for s in stops for n in range(1, len(s)) if text.endswith(s[:n])), default=0)
    assert partial_stop_suffix(text, stops) == expected


def _char_tokenizer() -> Tokenizer:
    """One token per ASCII letter, plus an EOS special token with id 0."""
    vocab = {"<eos>": 0, **{c: i + 1 for i, c in enumerate("abcdefghijklmnopqrstuvwxyz ")}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<eos>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(["<eos>"])
    return tok


def _run(
    params: SamplingParams, tokens: list[int], max_model_len: int = 100
) -> tuple[list[str], StopDecision | None, int]:
    tok = _char_tokenizer()
    checker = StopChecker(max_model_len, eos_token_ids=[0])
    detok = IncrementalDetokenizer.from_params(tok, params, prompt_token_ids=[])
    deltas: list[str] = []
    output: list[int] = []
    for t in tokens:
        output.append(t)
        result = checker.step(params, 1, output, detok, [t])
        deltas.append(result.text_delta)
        if result.decision is not None:
            return deltas, result.decision, len(output)
    return deltas, None, len(output)


def _ids(text: str) -> list[int]:
    return _char_tokenizer().encode(text).ids


def test_step_stop_string_cuts_text_but_keeps_tokens() -> None:
    params = SamplingParams(stop=["lo w"], max_tokens=50)
    deltas, decision, n = _run(params, _ids("hello world"))
    assert "".join(deltas) == "hel"
    assert decision == StopDecision("stop", "lo w")
    assert n == len("hello w")


def test_step_include_stop_str_in_output() -> None:
    params = SamplingParams(stop=["lo w"], include_stop_str_in_output=True, max_tokens=50)
    deltas, decision, _ = _run(params, _ids("hello world"))
    assert "".join(deltas) == "hello w"
    assert decision == StopDecision("stop", "lo w")


def test_step_eos_text_is_dropped_and_held_text_flushed() -> None:
    params = SamplingParams(stop=["xyz"], skip_special_tokens=False, max_tokens=50)
    deltas, decision, _ = _run(params, [*_ids("abxy"), 0])
    assert decision == StopDecision("stop")
    # "x" and "xy" are held back (they could start "xyz") and flushed at EOS, whose own text
    # "<eos>" is not part of the output.
    assert deltas == ["a", "b", "", "", "xy"]


def test_step_stop_token_text_kept_with_include_stop_str() -> None:
    params = SamplingParams(
        stop_token_ids=[3], include_stop_str_in_output=True, skip_special_tokens=False
    )
    deltas, decision, _ = _run(params, _ids("abcd"))
    assert decision == StopDecision("stop", 3)
    assert "".join(deltas) == "abc"


def test_step_length_finish_flushes_held_text() -> None:
    params = SamplingParams(stop=["cde"], max_tokens=4)
    deltas, decision, _ = _run(params, _ids("abcdxx"))
    assert decision == StopDecision("length")
    assert deltas == ["a", "b", "", "cd"]


def test_step_stop_string_on_the_last_allowed_token_reports_stop() -> None:
    params = SamplingParams(stop=["cd"], max_tokens=4)
    deltas, decision, _ = _run(params, _ids("abcd"))
    assert decision == StopDecision("stop", "cd")
    assert "".join(deltas) == "ab"


def test_step_min_tokens_ignores_stop_strings_inside_the_first_tokens() -> None:
    params = SamplingParams(stop=["ab"], min_tokens=3, max_tokens=50)
    deltas, decision, n = _run(params, _ids("abxaby"))
    assert decision == StopDecision("stop", "ab")
    assert n == 5
    assert "".join(deltas) == "abx"
