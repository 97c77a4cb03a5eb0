"""One batched sampler: a step's logits in, one token per request out.

The pipeline follows the order of vLLM's V1 sampler, one function per knob:

    raw logprobs -> min_tokens mask -> penalties -> (greedy: argmax)
                 -> temperature -> min_p -> top_k -> top_p -> random draw

Logprobs are those of the RAW model distribution by default (log_softmax of the
logits the model produced, before penalties / temperature / truncation), which
is vLLM's default (`logprobs_mode="raw_logprobs"`). `Sampler(logprobs_mode=
"processed")` reports the distribution actually sampled from instead. Prompt
logprobs are always raw: nothing is sampled at prompt positions.

Seeded requests carry their own `torch.Generator`, and every sampled row takes
exactly one uniform number from its generator and picks the token where that
number falls in the row's cumulative distribution (inverse-CDF sampling). So
a row's draw depends only on its own generator and distribution, never on
which other requests share the batch. (vLLM draws a whole vocabulary of
exponential noise per row instead, the "exponential race" argmax(p / E); it is
batch-invariant in the same way, but costs a full-vocabulary random draw per
row, which on a CPU is several times the cost of everything else here.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from reference_engine.sampling_params import SamplingParams

LogprobsMode = Literal["raw", "processed"]


@dataclass(slots=True)
class Logprob:
    """One token's log-probability; rank 1 is the most likely token."""

    logprob: float
    rank: int
    decoded_token: str | None = None  # filled in by whoever holds the tokenizer


# For one position: the chosen token first, then the top-N tokens by rank.
TokenLogprobs = dict[int, Logprob]


@dataclass(slots=True)
class SamplingRow:
    """What the sampler needs to know about one request in this step.

    Normally a request owns exactly one logits row: the last position of what
    was run. A request that wants prompt logprobs owns one row per prompt
    position of its prefill chunk instead (see `prompt_logprob_layout`): the
    leading `num_prompt_logprob_rows` score the next prompt token, and the last
    row (when `do_sample`) is sampled as usual.
    """

    params: SamplingParams
    prompt_token_ids: Sequence[int]
    output_token_ids: Sequence[int]
    generator: torch.Generator | None = None  # None: the sampler's own (unseeded) stream
    # Blocked together with params.stop_token_ids until min_tokens are out;
    # ignored when params.ignore_eos.
    eos_token_ids: Sequence[int] = ()
    num_prompt_logprob_rows: int = 0
    prompt_logprob_start: int = 0  # prompt position of the first such row
    do_sample: bool = True  # False for a prefill chunk that stops short of the prompt's end

    @property
    def num_logits_rows(self) -> int:
        return self.num_prompt_logprob_rows + int(self.do_sample)


def prompt_logprob_layout(chunk_start: int, chunk_end: int, prompt_len: int) -> tuple[int, bool]:
    """(num_prompt_logprob_rows, do_sample) for a request that wants prompt
    logprobs and runs prompt positions [chunk_start, chunk_end).

    Position p scores prompt token p + 1, so the prompt's last position has
    nothing to score: it is the sampling position instead. The engine then puts
    all chunk positions into the batch's logits_indices.
    """
    if not 0 <= chunk_start < chunk_end <= prompt_len:
        raise ValueError(
            f"bad prefill chunk [{chunk_start}, {chunk_end}) of a {prompt_len}-token prompt"
        )
    reaches_end = chunk_end == prompt_len
    return chunk_end - chunk_start - int(reaches_end), reaches_end


def request_generator(
    seed: int | None, index: int = 0, device: str | torch.device = "cpu"
) -> torch.Generator | None:
    """The per-request generator for a seeded request (None when unseeded).

    The i-th of n parallel samples uses seed + i (vLLM's convention), so
    siblings differ but each is reproducible on its own.
    """
    if seed is None:
        return None
    generator = torch.Generator(device=device)
    generator.manual_seed(seed + index)
    return generator


@dataclass(slots=True)
class SamplingMetadata:
    """Per-step knobs packed into [B] tensors over the rows that sample."""

    rows: list[SamplingRow]
    sample_rows: list[int]  # index into `rows` of each sampling row, in logits order
    sample_indices: list[int]  # logits row of each sampling row
    prompt_slices: list[tuple[int, int] | None]  # per row: logits [start, stop) of prompt rows
    num_logits_rows: int
    temperature: torch.Tensor  # [S]; 1.0 for greedy rows so the division is harmless
    greedy: torch.Tensor  # [S] bool
    top_k: torch.Tensor  # [S] int64; 0 = off
    top_p: torch.Tensor  # [S]
    min_p: torch.Tensor  # [S]
    repetition_penalty: torch.Tensor  # [S]
    presence_penalty: torch.Tensor  # [S]
    frequency_penalty: torch.Tensor  # [S]
    all_greedy: bool
    any_penalty: bool
    # Which truncations some row uses: each is a few passes over [S, V], skipped when unused.
    any_min_p: bool
    any_top_k: bool
    any_top_p: bool

    @classmethod
    def build(cls, rows: list[SamplingRow]) -> SamplingMetadata:
        sample_rows: list[int] = []
        sample_indices: list[int] = []
        prompt_slices: list[tuple[int, int] | None] = []
        cursor = 0
        for i, row in enumerate(rows):
            if row.num_prompt_logprob_rows < 0:
                raise ValueError("num_prompt_logprob_rows must be non-negative")
            n_prompt = row.num_prompt_logprob_rows
            prompt_slices.append((cursor, cursor + n_prompt) if n_prompt else None)
            cursor += n_prompt
            if row.do_sample:
                sample_rows.append(i)
                sample_indices.append(cursor)
                cursor += 1
        params = [rows[i].params for i in sample_rows]
        greedy = [p.greedy for p in params]

        def column(values: Sequence[float], dtype: torch.dtype = torch.float64) -> torch.Tensor:
            return torch.tensor(values, dtype=dtype)

        top_k = [p.top_k if p.top_k > 0 else 0 for p in params]
        return cls(
            rows=rows,
            sample_rows=sample_rows,
            sample_indices=sample_indices,
            prompt_slices=prompt_slices,
            num_logits_rows=cursor,
            temperature=column(
                [1.0 if g else p.temperature for p, g in zip(params, greedy, strict=True)]
            ),
            greedy=torch.tensor(greedy, dtype=torch.bool),
            top_k=column(top_k, torch.int64),
            top_p=column([p.top_p for p in params]),
            min_p=column([p.min_p for p in params]),
            repetition_penalty=column([p.repetition_penalty for p in params]),
            presence_penalty=column([p.presence_penalty for p in params]),
            frequency_penalty=column([p.frequency_penalty for p in params]),
            all_greedy=all(greedy),
            any_penalty=any(
                p.repetition_penalty != 1.0
                or p.presence_penalty != 0.0
                or p.frequency_penalty != 0.0
                for p in params
            ),
            any_min_p=any(p.min_p > 0.0 for p in params),
            any_top_k=any(k > 0 for k in top_k),
            any_top_p=any(p.top_p < 1.0 for p in params),
        )


@dataclass(slots=True)
class SamplerOutput:
    sampled_token_ids: torch.Tensor  # [len(rows)] int64 on CPU; -1 where a row did not sample
    logprobs: list[TokenLogprobs | None]  # per row; None unless params.logprobs and sampled
    prompt_logprobs: list[list[TokenLogprobs] | None]  # per row: one entry per prompt row

    def token_ids(self) -> list[int]:
        return self.sampled_token_ids.tolist()


class Sampler:
    """Stateless apart from the noise stream used for unseeded requests."""

    def __init__(self, logprobs_mode: LogprobsMode = "raw", seed: int | None = None) -> None:
        if logprobs_mode not in ("raw", "processed"):
            raise ValueError(f"logprobs_mode must be 'raw' or 'processed', got {logprobs_mode!r}")
        self.logprobs_mode: LogprobsMode = logprobs_mode
        # Unseeded requests share this CPU stream; seeded ones bring their own generator.
        self._generator = torch.Generator()
        if seed is None:
            self._generator.seed()
        else:
            self._generator.manual_seed(seed)

    def __call__(self, logits: torch.Tensor, metadata: SamplingMetadata) -> SamplerOutput:
        if logits.dim() != 2 or logits.shape[0] != metadata.num_logits_rows:
            raise ValueError(
                f"expected logits [{metadata.num_logits_rows}, vocab], got {list(logits.shape)}"
            )
        rows = metadata.rows
        # float64 stays float64 (tests use it to rule out ties); anything else is sampled in float32.
        work = logits.to(torch.float64 if logits.dtype == torch.float64 else torch.float32)
        prompt_logprobs = [
            _prompt_logprobs(work[s[0] : s[1]], row)
            if s is not None and row.params.prompt_logprobs is not None
            else None
            for row, s in zip(rows, metadata.prompt_slices, strict=True)
        ]
        sampled = torch.full((len(rows),), -1, dtype=torch.int64)
        logprobs: list[TokenLogprobs | None] = [None] * len(rows)
        if not metadata.sample_rows:
            return SamplerOutput(sampled, logprobs, prompt_logprobs)

        sample_rows = [rows[i] for i in metadata.sample_rows]
        # The common decode step samples every row: skip the gather copy then.
        identity = metadata.sample_indices == list(range(work.shape[0]))
        raw = work if identity else work[metadata.sample_indices]
        want_logprobs = any(r.params.logprobs is not None for r in sample_rows)
        tokens, processed = self._sample(
            raw,
            metadata,
            sample_rows,
            want_processed=want_logprobs and self.logprobs_mode == "processed",
        )
        sampled[metadata.sample_rows] = tokens.cpu()

        if want_logprobs:
            source = _log_softmax(raw if self.logprobs_mode == "raw" else processed)
            nums = [r.params.logprobs for r in sample_rows]
            for i, entry in zip(
                metadata.sample_rows, _token_logprobs(source, tokens, nums), strict=True
            ):
                logprobs[i] = entry
        return SamplerOutput(sampled, logprobs, prompt_logprobs)

    def _sample(
        self,
        raw: torch.Tensor,
        md: SamplingMetadata,
        rows: list[SamplingRow],
        want_processed: bool,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns the chosen tokens [S] and (when wanted) the logits they were drawn from."""
        device = raw.device
        penalized, greedy_tokens, x = self._process(raw, md, rows)
        if x is None:
            return greedy_tokens, penalized
        uniforms = self._uniforms(rows, md.greedy.tolist())
        random_tokens = inverse_cdf_sample(torch.softmax(x, dim=-1), uniforms)
        greedy = md.greedy.to(device)
        tokens = torch.where(greedy, greedy_tokens, random_tokens)
        if not want_processed:
            return tokens, x
        # Greedy rows report the logits their argmax saw, whatever else is in the batch.
        return tokens, torch.where(greedy.unsqueeze(1), penalized, x)

    @staticmethod
    def _process(
        raw: torch.Tensor, md: SamplingMetadata, rows: list[SamplingRow]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(penalized logits, greedy tokens, logits after temperature and truncation or None
        when every row is greedy): the pipeline both sampling and `distributions` share."""
        device = raw.device
        x = apply_min_tokens(raw, rows)
        if md.any_penalty:
            x = apply_penalties(x, rows, md)
        # Truncation below always keeps a row's best token, so only these two steps can empty a row.
        x = penalized = _revive_empty_rows(x, raw)
        greedy_tokens = x.argmax(dim=-1)
        if md.all_greedy:
            return penalized, greedy_tokens, None
        x = x / md.temperature.to(device=device, dtype=x.dtype).unsqueeze(1)
        if md.any_min_p:
            x = apply_min_p(x, md.min_p.to(device))
        if md.any_top_k:
            x = apply_top_k(x, md.top_k.to(device))
        if md.any_top_p:
            x = apply_top_p(x, md.top_p.to(device))
        return penalized, greedy_tokens, x

    def distributions(self, logits: torch.Tensor, metadata: SamplingMetadata) -> torch.Tensor:
        """[S, V]: the distribution each sampling row would draw from, after every knob; a
        greedy row is one-hot on its argmax. Speculative decoding compares a target's
        distributions with a drafter's (spec_decode/rejection_sampler.py)."""
        work = logits.to(torch.float64 if logits.dtype == torch.float64 else torch.float32)
        raw = work[metadata.sample_indices]
        rows = [metadata.rows[i] for i in metadata.sample_rows]
        _, greedy_tokens, x = self._process(raw, metadata, rows)
        one_hot = torch.zeros_like(raw).scatter_(1, greedy_tokens.unsqueeze(1), 1.0)
        if x is None:
            return one_hot
        probs = torch.softmax(x, dim=-1)
        return torch.where(metadata.greedy.to(raw.device).unsqueeze(1), one_hot, probs)

    def _uniforms(self, rows: list[SamplingRow], greedy: list[bool]) -> torch.Tensor:
        """One U[0, 1) per row from the row's own generator (float64 on CPU)."""
        draws = [
            # Greedy rows never consume randomness: a seeded greedy request stays reproducible.
            0.0
            if is_greedy
            else torch.rand(1, generator=row.generator or self._generator, dtype=torch.float64)
            .cpu()
            .item()
            for row, is_greedy in zip(rows, greedy, strict=True)
        ]
        return torch.tensor(draws, dtype=torch.float64)


def inverse_cdf_sample(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Per row: the first token whose cumulative probability exceeds u * total.

    The picked token always has mass: its cumulative value is above the target
    and its left neighbour's is not. Keeping the target strictly below the
    total (u * total can round up to it) means some token always qualifies.
    The sum runs in the logits' dtype: in float32 its rounding (about 1e-7 of
    the mass per step) blurs only the odds of tokens rarer than that; a float64
    sum would cost several times the rest of a CPU sampling step.
    """
    cdf = probs.cumsum(dim=-1)
    total = cdf[:, -1:]
    target = (uniforms.to(device=cdf.device, dtype=cdf.dtype).unsqueeze(1) * total).minimum(
        torch.nextafter(total, torch.zeros_like(total))
    )
    return torch.searchsorted(cdf, target, right=True).squeeze(1)


# --- logits processors: each takes and returns logits [S, V] ---------------------------------


def apply_min_tokens(x: torch.Tensor, rows: list[SamplingRow]) -> torch.Tensor:
    """Forbid stop tokens (and EOS unless ignore_eos) until min_tokens are generated."""
    vocab = x.shape[1]
    masked = x
    for j, row in enumerate(rows):
        p = row.params
        if len(row.output_token_ids) >= p.min_tokens:
            continue
        blocked = list(p.stop_token_ids) + ([] if p.ignore_eos else list(row.eos_token_ids))
        blocked = [t for t in blocked if 0 <= t < vocab]
        if blocked:
            if masked is x:
                masked = x.clone()  # copy only when needed: the raw logits are still wanted
            masked[j, blocked] = float("-inf")
    return masked


def apply_penalties(x: torch.Tensor, rows: list[SamplingRow], md: SamplingMetadata) -> torch.Tensor:
    """vLLM's definitions: the repetition penalty looks at prompt AND output
    tokens and divides positive logits / multiplies negative ones; presence and
    frequency penalties look at output tokens only and are subtracted.

    Only tokens in a row's history change, so each row touches just those
    columns instead of building [S, V] count tensors.
    """
    vocab = x.shape[1]
    out = x.clone()
    for j, row in enumerate(rows):
        rep = md.repetition_penalty[j].item()
        freq = md.frequency_penalty[j].item()
        pres = md.presence_penalty[j].item()
        if rep != 1.0:
            seen = torch.tensor(
                [t for t in {*row.prompt_token_ids, *row.output_token_ids} if 0 <= t < vocab],
                dtype=torch.int64,
                device=x.device,
            )
            vals = out[j, seen]
            out[j, seen] = torch.where(vals > 0, vals / rep, vals * rep)
        if (freq != 0.0 or pres != 0.0) and row.output_token_ids:
            generated = torch.tensor(list(row.output_token_ids), dtype=torch.int64)
            ids, counts = generated[(generated >= 0) & (generated < vocab)].unique(
                return_counts=True
            )
            ids = ids.to(x.device)
            out[j, ids] -= freq * counts.to(device=x.device, dtype=x.dtype) + pres
    return out


def apply_min_p(x: torch.Tensor, min_p: torch.Tensor) -> torch.Tensor:
    """Drop tokens less likely than min_p times the most likely one."""
    probs = torch.softmax(x, dim=-1)
    threshold = min_p.to(probs.dtype).unsqueeze(1) * probs.amax(dim=-1, keepdim=True)
    return x.masked_fill(probs < threshold, float("-inf"))


def apply_top_k(x: torch.Tensor, top_k: torch.Tensor) -> torch.Tensor:
    """Keep the k highest logits per row (ties with the k-th are kept); k <= 0 or k >= V is off."""
    vocab = x.shape[1]
    k = torch.where((top_k <= 0) | (top_k > vocab), vocab, top_k)
    active = k < vocab
    if not bool(active.any()):
        return x
    # torch.topk over the largest k asked for, not a sort of the whole vocabulary.
    width = int(k[active].max())
    best = x.topk(width, dim=-1).values
    kth = best.gather(1, (k.clamp(max=width) - 1).unsqueeze(1))
    return x.masked_fill((x < kth) & active.unsqueeze(1), float("-inf"))


def apply_top_p(x: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose mass reaches top_p.

    A token is kept when the mass strictly ahead of it is below top_p, so the
    most likely token always survives. Rows with top_p == 1 are skipped
    outright: rounding in the cumulative sum must not drop the tail.
    """
    active = top_p < 1.0
    if not bool(active.any()):
        return x
    vocab = x.shape[1]
    limit = top_p.to(x.dtype).unsqueeze(1)
    probs = torch.softmax(x, dim=-1)
    # The kept set is usually small, so sort only the best `width` tokens and
    # widen while some active row's window holds less than top_p of the mass;
    # everything past a window that does is dropped anyway. Exact, and far
    # cheaper than sorting a 150k vocabulary for every row.
    width = min(vocab, 256)
    while True:
        top, order = probs.topk(width, dim=-1)
        mass = top.cumsum(dim=-1)
        if width == vocab or bool((mass[:, -1:] >= limit)[active].all()):
            break
        width = min(vocab, width * 4)
    keep_sorted = (mass - top) < limit
    keep = torch.zeros(x.shape, dtype=torch.bool, device=x.device).scatter_(1, order, keep_sorted)
    return x.masked_fill(~keep & active.unsqueeze(1), float("-inf"))


def _revive_empty_rows(x: torch.Tensor, raw: torch.Tensor) -> torch.Tensor:
    """A row with nothing left (all -inf) would turn into NaN in softmax. That
    only happens when the input row was already unusable or min_tokens blocked
    every finite token; fall back to the raw row, else to uniform."""
    empty = x.amax(dim=-1) == float("-inf")
    if not bool(empty.any()):
        return x
    fallback = torch.where(
        raw.amax(dim=-1, keepdim=True) > float("-inf"), raw, torch.zeros_like(raw)
    )
    return torch.where(empty.unsqueeze(1), fallback, x)


def _log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log_softmax that reads a row with no finite logit as uniform instead of NaN."""
    empty = x.amax(dim=-1, keepdim=True) == float("-inf")
    return torch.log_softmax(x.masked_fill(empty, 0.0), dim=-1)


# --- logprobs --------------------------------------------------------------------------------


def _token_logprobs(
    logprobs: torch.Tensor, chosen: torch.Tensor, nums: Sequence[int | None]
) -> list[TokenLogprobs | None]:
    """Per row: the chosen token's logprob and rank, then the top-N tokens."""
    chosen = chosen.to(logprobs.device)
    chosen_lp = logprobs.gather(1, chosen.unsqueeze(1))
    ranks = (logprobs > chosen_lp).sum(dim=-1) + 1
    max_n = max((n or 0) for n in nums)
    top_lp, top_ids = logprobs.topk(min(max_n, logprobs.shape[1]), dim=-1)
    chosen_list, chosen_lp_list, ranks_list = (
        chosen.tolist(),
        chosen_lp.squeeze(1).tolist(),
        ranks.tolist(),
    )
    top_lp_list, top_ids_list = top_lp.tolist(), top_ids.tolist()
    out: list[TokenLogprobs | None] = []
    for j, n in enumerate(nums):
        if n is None:
            out.append(None)
            continue
        entry: TokenLogprobs = {chosen_list[j]: Logprob(chosen_lp_list[j], ranks_list[j])}
        for r, (tok, lp) in enumerate(
            zip(top_ids_list[j][:n], top_lp_list[j][:n], strict=True), start=1
        ):
            entry.setdefault(tok, Logprob(lp, r))
        out.append(entry)
    return out


def _prompt_logprobs(logits: torch.Tensor, row: SamplingRow) -> list[TokenLogprobs]:
    """Raw logprobs of each next prompt token for this row's prompt positions."""
    start = row.prompt_logprob_start
    targets = list(row.prompt_token_ids[start + 1 : start + 1 + logits.shape[0]])
    if len(targets) != logits.shape[0]:
        raise ValueError(
            f"prompt logprob rows [{start}, {start + logits.shape[0]}) run past a "
            f"{len(row.prompt_token_ids)}-token prompt"
        )
    target = torch.tensor(targets, dtype=torch.int64, device=logits.device)
    num = row.params.prompt_logprobs
    entries = _token_logprobs(_log_softmax(logits), target, [num] * len(targets))
    return [e for e in entries if e is not None]


def raw_token_logprobs(
    logits: torch.Tensor, chosen: torch.Tensor, nums: Sequence[int | None]
) -> list[TokenLogprobs | None]:
    """Raw logprobs of tokens chosen by someone else (speculative verification), per row."""
    work = logits.to(torch.float64 if logits.dtype == torch.float64 else torch.float32)
    return _token_logprobs(_log_softmax(work), chosen, nums)
