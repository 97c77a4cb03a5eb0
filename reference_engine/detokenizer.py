"""Incremental detokenization: token ids in, text deltas out, one request each.

Two things make streaming text harder than decoding once at the end:

* One character can span several tokens (byte-level BPE splits an emoji or a
  CJK character into byte pieces), and one token's text can depend on its
  left neighbour (SentencePiece-style decoders drop a leading space only at
  the start of a sequence). So we decode a small sliding window of tokens —
  `tokens[prefix_offset:]` minus `tokens[prefix_offset:read_offset]` — and
  only accept it once it no longer ends in U+FFFD, the replacement character
  a decoder produces for an unfinished UTF-8 sequence. (The same trick as
  vLLM's and Hugging Face's streamers.)

* A stop string can arrive in pieces ("</" now, "answer>" next step). Text
  that could still grow into a stop string is held back, so no delta ever
  contains part of a stop string that then gets cut.

The detokenizer owns the text; stop_checker.py owns the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokenizers import Tokenizer

from reference_engine.sampling_params import SamplingParams
from reference_engine.stop_checker import find_stop_string, partial_stop_suffix

if TYPE_CHECKING:  # the sampler pulls in torch; detokenizing text does not need it
    from reference_engine.sampler import TokenLogprobs

REPLACEMENT_CHAR = "\ufffd"
# Prompt tokens decoded in front of the output so that the first output
# token's text is rendered in context (e.g. a leading space survives).
PROMPT_CONTEXT_TOKENS = 5


@dataclass(frozen=True, slots=True)
class DetokenizerUpdate:
    text_delta: str  # text to stream now; "" when everything new is held back
    stop_string: str | None = None  # the stop string that ended the text, if any
    finished: bool = False


class IncrementalDetokenizer:
    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        prompt_token_ids: Sequence[int] = (),
        skip_special_tokens: bool = True,
        stop: Sequence[str] = (),
        include_stop_str_in_output: bool = False,
        min_tokens: int = 0,
    ) -> None:
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self.stop = [s for s in stop if s]
        self.include_stop_str_in_output = include_stop_str_in_output
        self.min_tokens = min_tokens
        self.stop_string: str | None = None
        self.finished = False

        self._tokens = self._prompt_context(prompt_token_ids)  # context + decoded output tokens
        self._prefix_offset = 0
        self._read_offset = len(self._tokens)
        # Characters of the current window (past prefix_text) already moved to _text
        # while the window still ended in an unfinished character.
        self._window_emitted = 0
        self._num_output_tokens = 0
        self._text = ""  # output text decoded so far: only grows, until a stop string cuts it
        self._released = 0  # characters of _text already streamed
        self._checked = 0  # characters of _text already searched for stop strings

    @classmethod
    def from_params(
        cls, tokenizer: Tokenizer, params: SamplingParams, prompt_token_ids: Sequence[int] = ()
    ) -> IncrementalDetokenizer:
        return cls(
            tokenizer,
            prompt_token_ids=prompt_token_ids,
            skip_special_tokens=params.skip_special_tokens,
            stop=params.stop,
            include_stop_str_in_output=params.include_stop_str_in_output,
            min_tokens=params.min_tokens,
        )

    @property
    def output_text(self) -> str:
        """Everything streamed so far; the final text once finished."""
        return self._text[: self._released]

    def update(
        self, new_token_ids: Sequence[int], *, finished: bool = False, stop_terminated: bool = False
    ) -> DetokenizerUpdate:
        """Feed newly generated tokens; get the text that is safe to stream.

        finished: the request ends with these tokens (for a token-level
        reason), so flush everything held back. stop_terminated: the last
        token is a stop token (EOS or stop_token_ids); its text is dropped
        unless include_stop_str_in_output.
        """
        if self.finished:
            return DetokenizerUpdate("", self.stop_string, finished=True)
        ids = list(new_token_ids)
        self._num_output_tokens += len(ids)
        if stop_terminated and ids and not self.include_stop_str_in_output:
            ids.pop()
        self._tokens.extend(ids)
        self._decode_pending(flush=finished or stop_terminated)

        if self.stop and self._num_output_tokens > self.min_tokens:
            match = find_stop_string(self._text, self.stop, self._checked)
            if match is not None:
                cut = match.end if self.include_stop_str_in_output else match.start
                self._text = self._text[:cut]
                return self._release(len(self._text), stop_string=match.stop)
        # Text of the first min_tokens tokens can never complete a stop string.
        # (Counted per call: the engine feeds one token at a time.)
        self._checked = len(self._text)
        if finished or stop_terminated:
            return self._release(len(self._text))
        held = partial_stop_suffix(self._text, self.stop) if self.stop else 0
        return self._release(max(self._released, len(self._text) - held))

    def _release(self, upto: int, stop_string: str | None = None) -> DetokenizerUpdate:
        delta = self._text[self._released : upto]
        self._released = max(self._released, upto)
        done = stop_string is not None or (upto == len(self._text) and self.finished)
        if stop_string is not None:
            self.stop_string = stop_string
            self.finished = True
        return DetokenizerUpdate(delta, stop_string, finished=done)

    def _decode_pending(self, flush: bool) -> None:
        """Append newly complete text to _text, advancing the decode window."""
        if self._read_offset == len(self._tokens):
            if flush:
                self.finished = True
            return
        prefix_text = self._decode(self._tokens[self._prefix_offset : self._read_offset])
        new_text = self._decode(self._tokens[self._prefix_offset :])
        start = len(prefix_text) + self._window_emitted
        if new_text.endswith(REPLACEMENT_CHAR) and not flush:
            # An unfinished character: wait for the tokens that complete it, but
            # take the whole characters in front of it now (a stop string may end there).
            stable = len(new_text.rstrip(REPLACEMENT_CHAR))
            if stable > start:
                self._text += new_text[start:stable]
                self._window_emitted += stable - start
            return
        self._text += new_text[start:]
        self._window_emitted = 0
        self._prefix_offset = self._read_offset
        self._read_offset = len(self._tokens)
        if flush:
            self.finished = True

    def _decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=self.skip_special_tokens)

    def _prompt_context(self, prompt_token_ids: Sequence[int]) -> list[int]:
        context = list(prompt_token_ids[-PROMPT_CONTEXT_TOKENS:])
        # A prompt cut mid-character would make the first output text start
        # wrong; decoding without context is the safer choice then.
        if context and self._decode(context).endswith(REPLACEMENT_CHAR):
            return []
        return context


def decode_token(tokenizer: Tokenizer, token_id: int) -> str:
    """One token's own text, e.g. for Logprob.decoded_token. A byte piece of a
    longer character decodes to U+FFFD on its own, as in vLLM's logprobs."""
    return tokenizer.decode([token_id], skip_special_tokens=False)


def annotate_logprobs(tokenizer: Tokenizer, entry: TokenLogprobs) -> TokenLogprobs:
    """Fill in decoded_token for every token of one position's logprobs."""
    for token_id, logprob in entry.items():
        logprob.decoded_token = decode_token(tokenizer, token_id)
    return entry
