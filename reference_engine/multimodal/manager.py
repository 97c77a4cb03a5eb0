"""MultiModalManager: the engine's multimodal input piece, beside the scheduler and the KV
cache manager.

- At admission (`process`): images are processed (or taken already processed, as the server
  does off the engine thread), each image placeholder in the prompt is expanded to the
  image's token count, and the prompt's multimodal RoPE positions computed. The result,
  a MultiModalInputs, lives on the request's Sequences (their `multi_modal`).
- Every step (`step_inputs`): the images the step's tokens reach that the encoder cache
  lacks are encoded together, in one call of the vision encoder (vLLM's
  _execute_mm_encoder), and filed there; then each scheduled sequence with images gets its
  new tokens' positions and, for the placeholder tokens among them, the image embeddings
  (`seq_input`). A chunk boundary or a prefix-cache hit may cut an image in two: each
  step takes its rows' slice.
- When the scheduler sizes a chunk (`limit_tokens`, vLLM's encoder-cache budget check): a
  chunk that would reach an image the encoder cache has no room for stops before it, and
  the request continues once earlier images are passed and their references gone.
- When a request ends (`free`): its encoder-cache references go.

Owns the image processor and the encoder cache; the vision encoder is the model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.multimodal.encoder_cache import EncoderCache
from reference_engine.multimodal.image_processor import (
    ImageError,
    ImageProcessor,
    ImageProcessorConfig,
)
from reference_engine.multimodal.inputs import (
    MultiModalInputs,
    PlaceholderRange,
    ProcessedImage,
    SeqMultiModal,
)
from reference_engine.multimodal.mrope import mrope_positions

if TYPE_CHECKING:
    from reference_engine.config import ModelConfig
    from reference_engine.models.qwen3_5 import Qwen3_5ForConditionalGeneration
    from reference_engine.sequence import Sequence as Seq

# Image tokens the encoder cache holds when the engine does not say (vLLM sizes it from the
# step's token budget; images are often larger than one step's budget here).
DEFAULT_ENCODER_CACHE_TOKENS = 16384


class MultiModalManager:
    def __init__(
        self, model: Qwen3_5ForConditionalGeneration, model_config: ModelConfig, cache_tokens: int
    ) -> None:
        raw = model_config.hf_config
        self.model = model
        self.image_token_id = int(raw["image_token_id"])
        self.vision_start_id = raw.get("vision_start_token_id")
        self.vision_end_id = raw.get("vision_end_token_id")
        self.processor = ImageProcessor(
            ImageProcessorConfig.from_pretrained(model_config.model_dir, raw["vision_config"])
        )
        self.cache = EncoderCache(cache_tokens)
        self.num_encoder_runs = 0  # images encoded (cache misses), for tests and stats
        self.num_encoder_calls = 0  # vision-encoder forward passes (images batched per step)
        self._just_encoded: set[tuple[str, str]] = set()  # (image hash, request) this step
        self._planned: dict[str, int] = {}  # images the current schedule will encode

    @classmethod
    def for_model(
        cls, model: Any, model_config: ModelConfig, cache_tokens: int | None = None
    ) -> MultiModalManager | None:
        """A manager when the model has a vision encoder in this process, else None."""
        if model is None or not hasattr(model, "encode_images"):
            return None
        return cls(model, model_config, cache_tokens or DEFAULT_ENCODER_CACHE_TOKENS)

    # --- admission --------------------------------------------------------------------
    def process(
        self, token_ids: list[int], images: Sequence[Any]
    ) -> tuple[list[int], MultiModalInputs]:
        """(the prompt with each image's placeholder expanded, its MultiModalInputs).

        Each image is stood for by one placeholder token, or by a run already expanded to
        its token count (a prompt a processor built); anything else is an ImageError."""
        processed = [im if isinstance(im, ProcessedImage) else self.processor(im) for im in images]
        merge = self.processor.config.merge_size
        for im in processed:
            if im.merge_size != merge or im.pixel_values.shape[1] != self._patch_dim:
                raise ImageError("the image was processed for another model's patch geometry")
            if im.num_tokens > self.cache.capacity:
                raise ImageError(
                    f"the image needs {im.num_tokens} tokens, more than the encoder cache "
                    f"holds ({self.cache.capacity}); send a smaller image"
                )
        runs = _runs(token_ids, self.image_token_id)
        if len(runs) != len(processed):
            raise ImageError(
                f"the prompt has {len(runs)} image placeholders but {len(processed)} images"
            )
        out: list[int] = []
        placeholders: list[PlaceholderRange] = []
        cursor = 0
        for (start, length), image in zip(runs, processed, strict=True):
            if length not in (1, image.num_tokens):
                raise ImageError(
                    f"an image placeholder run has {length} tokens; its image needs "
                    f"{image.num_tokens} (or one placeholder to expand)"
                )
            out.extend(token_ids[cursor:start])
            placeholders.append(PlaceholderRange(len(out), image.num_tokens))
            out.extend([self.image_token_id] * image.num_tokens)
            cursor = start + length
        out.extend(token_ids[cursor:])
        positions, delta = mrope_positions(
            len(out), placeholders, [im.grid_thw for im in processed], merge
        )
        return out, MultiModalInputs(tuple(processed), tuple(placeholders), positions, delta)

    def placeholder_text(self, tokenizer: Any) -> str:
        """What stands for one image in a prompt's text, as Qwen3.5's chat template writes
        it: <|vision_start|><|image_pad|><|vision_end|> (by the tokenizer's own names)."""
        ids = [self.vision_start_id, self.image_token_id, self.vision_end_id]
        pieces = [tokenizer.id_to_token(int(i)) for i in ids if i is not None]
        if None in pieces:
            raise ImageError("the tokenizer has no image placeholder token")
        return "".join(pieces)

    @property
    def _patch_dim(self) -> int:
        return int(self.model.visual.config.patch_dim)

    # --- scheduling -------------------------------------------------------------------
    def begin_step(self) -> None:
        """A new schedule: nothing planned for the encoder yet."""
        self._planned = {}

    def limit_tokens(self, seq: Seq, start: int, num_tokens: int) -> int:
        """How many of tokens [start, start + num_tokens) of `seq` may run this step: all,
        unless they reach an image that is not cached and does not fit beside what the
        cache must keep (referenced entries) and this step's other new images."""
        mm: MultiModalInputs | None = seq.multi_modal
        if mm is None:
            return num_tokens
        end = start + num_tokens
        for image, ph in zip(mm.images, mm.placeholders, strict=True):
            if ph.end <= start or ph.offset >= end:
                continue
            if image.mm_hash in self.cache or image.mm_hash in self._planned:
                continue
            held = self.cache.referenced_tokens() + sum(self._planned.values())
            if image.num_tokens > self.cache.capacity - held:
                return max(0, ph.offset - start)  # up to the image; it waits for room
            self._planned[image.mm_hash] = image.num_tokens
        return num_tokens

    # --- each step --------------------------------------------------------------------
    def step_inputs(self, scheduled: Sequence[Any]) -> list[SeqMultiModal | None]:
        """SeqInput.multimodal for each scheduled item (its `seq`, `start`, `end`), the
        step's uncached images encoded in one batch first."""
        missing: dict[str, tuple[ProcessedImage, str]] = {}
        for item in scheduled:
            mm: MultiModalInputs | None = item.seq.multi_modal
            for image, ph in zip(mm.images if mm else (), mm.placeholders if mm else (), strict=True):
                overlaps = max(item.start, ph.offset) < min(item.end, ph.end)
                if overlaps and image.mm_hash not in self.cache:
                    missing.setdefault(image.mm_hash, (image, item.seq.request_id))
        if missing:
            self._encode([image for image, _ in missing.values()],
                         [rid for _, rid in missing.values()])  # fmt: skip
        return [self.seq_input(item.seq, item.start, item.end) for item in scheduled]

    def _encode(self, images: list[ProcessedImage], request_ids: list[str]) -> None:
        device = self.model.visual.pos_embed.weight.device
        pixels = torch.cat([im.pixel_values for im in images]).to(device)
        with torch.inference_mode():
            embeds = self.model.encode_images(pixels, [im.grid_thw for im in images])
        self.num_encoder_runs += len(images)
        self.num_encoder_calls += 1
        parts = embeds.split([im.num_tokens for im in images])
        for image, rid, part in zip(images, request_ids, parts, strict=True):
            self.cache.put(image.mm_hash, part, rid)  # referenced: nothing evicts it mid-step
            self._just_encoded.add((image.mm_hash, rid))

    def seq_input(self, seq: Seq, start: int, end: int) -> SeqMultiModal | None:
        """Positions and image embeddings of tokens [start, end) of `seq` (None: no images)."""
        mm: MultiModalInputs | None = seq.multi_modal
        if mm is None:
            return None
        part = SeqMultiModal(mm.positions(start, end))
        for image, ph in zip(mm.images, mm.placeholders, strict=True):
            lo, hi = max(start, ph.offset), min(end, ph.end)
            if lo >= hi:
                continue
            embeds = self._embeddings(image, seq.request_id)
            part.embeds.append((lo - start, embeds[lo - ph.offset : hi - ph.offset]))
            if hi == ph.end:  # the prompt has passed this image: its reference goes
                self.cache.release(image.mm_hash, seq.request_id)
        return part

    def _embeddings(self, image: ProcessedImage, request_id: str) -> torch.Tensor:
        key = (image.mm_hash, request_id)
        if key in self._just_encoded:  # filed this step under this request: not a cache hit
            self._just_encoded.discard(key)
            return self.cache.peek(image.mm_hash)
        cached = self.cache.get(image.mm_hash, request_id)
        if cached is not None:
            return cached
        self._encode([image], [request_id])  # a caller that skipped step_inputs
        return self._embeddings(image, request_id)

    def free(self, request_id: str) -> None:
        self.cache.release_request(request_id)


def _runs(token_ids: Sequence[int], token: int) -> list[tuple[int, int]]:
    """(start, length) of each maximal run of `token`."""
    runs: list[tuple[int, int]] = []
    i, n = 0, len(token_ids)
    while i < n:
        if token_ids[i] != token:
            i += 1
            continue
        j = i
        while j < n and token_ids[j] == token:
            j += 1
        runs.append((i, j - i))
        i = j
    return runs
