"""Load a local Hugging Face checkpoint folder: config, safetensors weights, tokenizer, chat template.

Weights may sit in one `model.safetensors` or be sharded with `model.safetensors.index.json`.
Checkpoint names map onto ours one to one, except q/k/v and gate/up, which fill slices of the
fused projections (the model's `PACKED_MODULES` table).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
from safetensors import SafetensorError, safe_open

from reference_engine.config import ConfigError, EngineConfig, ModelConfig
from reference_engine.layers.rotary import RotaryEmbedding
from reference_engine.models import model_class
from reference_engine.models.llama import LlamaForCausalLM

if TYPE_CHECKING:
    from tokenizers import Tokenizer

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}

# Checkpoint tensors the model recomputes or never uses.
_IGNORED_SUFFIXES = ("rotary_emb.inv_freq",)


def build_model(
    cfg: ModelConfig,
    dtype: torch.dtype,
    device: torch.device | str,
    quantization: str | None = None,
) -> LlamaForCausalLM:
    """The model with weights from `cfg.model_dir`, or randomly initialised when it is None.

    A quantized checkpoint's projections are built quantized and filled as stored; a float
    one is quantized after loading when `quantization` asks (layers/quantization/)."""
    from reference_engine.layers import quantization as quant

    stored = quant.checkpoint_scheme(cfg, quantization)
    # Every family keeps Llama's interface (forward, compute_logits, map_checkpoint_name,
    # lm_head) without subclassing it, so the registry's classes are typed as modules.
    cls = cast("type[LlamaForCausalLM]", model_class(cfg))
    if cfg.model_dir is None:
        with torch.device(device):
            model = cls(cfg).to(dtype)
        _reset_rotary(model)
    else:
        # Build on the meta device: random-initialising 0.6B parameters only to overwrite
        # them would cost more than loading them.
        with torch.device("meta"):
            model = cls(cfg).to(dtype)
        if stored is not None:
            quant.prepare_quantized_model(model, stored)
        model.to_empty(device=device)
        _reset_rotary(model)
        load_weights(model, cfg.model_dir)
    if stored is None and quantization is not None:
        quant.quantize_model(model, quant.get_scheme(quantization))
    return model.eval()


def _reset_rotary(model: torch.nn.Module) -> None:
    """Recompute the tables modules derive at build time (RoPE's cos/sin, the vision
    encoder's frequencies): non-persistent, so a model built on the meta device has none."""
    for module in model.modules():
        reset = getattr(module, "reset_cache", None)
        if isinstance(module, RotaryEmbedding) or callable(reset):
            module.reset_cache()  # type: ignore[operator]


def checkpoint_files(model_dir: Path) -> list[Path]:
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        try:
            weight_map: dict[str, str] = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (json.JSONDecodeError, KeyError) as exc:
            raise ConfigError(f"{index} is not a safetensors index: {exc}") from None
        files = [model_dir / name for name in sorted(set(weight_map.values()))]
    elif (model_dir / "model.safetensors").is_file():
        files = [model_dir / "model.safetensors"]
    else:
        files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise ConfigError(
            f"no *.safetensors weights in {model_dir} (.bin checkpoints are not read)"
        )
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise ConfigError(f"{model_dir} lacks weight shards listed in its index: {missing}")
    return files


def iter_checkpoint(model_dir: Path) -> Iterator[tuple[str, torch.Tensor]]:
    for name, tensor in iter_checkpoint_tensors(model_dir):
        yield name, tensor.read()


class CheckpointTensor:
    """A tensor still on disk: its shape is known, its bytes are read only for the slice a
    module asks for, so a tensor-parallel rank reads its own rows or columns and an
    expert-parallel rank skips experts it does not hold."""

    def __init__(self, name: str, handle: Any) -> None:
        self.name = name
        self._slice = handle.get_slice(name)
        self.shape: tuple[int, ...] = tuple(self._slice.get_shape())

    def read(self, dim: int = 0, start: int = 0, stop: int | None = None) -> torch.Tensor:
        """The tensor, or its [start, stop) range along `dim`."""
        if not self.shape:
            return self._slice[...]  # a scalar has no range to take
        index = [slice(None)] * len(self.shape)
        index[dim] = slice(start, self.shape[dim] if stop is None else stop)
        return self._slice[tuple(index)]

    def expect_shape(self, shape: tuple[int, ...]) -> None:
        if self.shape != tuple(shape):
            raise ConfigError(
                f"checkpoint tensor {self.name!r} has shape {self.shape}, "
                f"the model expects {tuple(shape)}: config.json does not match the weights"
            )


def iter_checkpoint_tensors(model_dir: Path) -> Iterator[tuple[str, CheckpointTensor]]:
    for path in checkpoint_files(model_dir):
        try:
            with safe_open(str(path), framework="pt") as f:
                for name in f.keys():  # noqa: SIM118 - safe_open is not a dict
                    yield name, CheckpointTensor(name, f)
        except SafetensorError as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None


def load_weights(model: LlamaForCausalLM, model_dir: Path) -> None:
    """Fill every parameter from the checkpoint. A module that owns part of a checkpoint
    tensor (a fused projection, a tensor-parallel shard, a rank's experts) says so with
    `checkpoint_shards(param)` and `load_checkpoint_tensor(param, shard, tensor)`; any other
    parameter takes the whole tensor of the same name."""
    load_named_tensors(model, iter_checkpoint_tensors(model_dir), f"checkpoint in {model_dir}")


def load_named_tensors(
    model: LlamaForCausalLM, tensors: Iterable[tuple[str, CheckpointTensor]], source: str
) -> None:
    """load_weights from any (checkpoint name, tensor) stream: a folder, or tensors a trainer
    sent (weight_update.py); every parameter must be filled."""
    params = dict(model.named_parameters())
    # Every (parameter, shard) the model needs; whatever is left at the end was never loaded.
    pending: set[tuple[str, str | None]] = set()
    for name in params:
        module, attr = _owner(model, name)
        shards = getattr(module, "checkpoint_shards", None)
        pending.update((name, s) for s in (shards(attr) if shards else [None]))
    tied = model.lm_head is None
    for hf_name, tensor in tensors:
        if hf_name.endswith(_IGNORED_SUFFIXES) or (tied and hf_name == "lm_head.weight"):
            continue
        holds = getattr(model, "holds_checkpoint_tensor", None)
        if holds is not None and not holds(hf_name):
            continue  # another pipeline stage's layer
        # Parts of a checkpoint a family does not run (e.g. a vision tower it does not serve).
        if hf_name.startswith(getattr(model, "IGNORED_CHECKPOINT_PREFIXES", ())):
            continue
        name, shard = model.map_checkpoint_name(hf_name)
        if name not in params:
            raise ConfigError(
                f"checkpoint tensor {hf_name!r} has no place in {type(model).__name__}"
            )
        module, attr = _owner(model, name)
        load = getattr(module, "load_checkpoint_tensor", None)
        if load is not None:
            load(attr, shard, tensor)
        else:
            tensor.expect_shape(tuple(params[name].shape))
            params[name].data.copy_(tensor.read())
        pending.discard((name, shard))
    if pending:
        names = sorted(f"{n}[{s}]" if s else n for n, s in pending)
        raise ConfigError(f"{source} lacks {len(names)} tensors, e.g. {names[:4]}")


def _owner(model: torch.nn.Module, param_name: str) -> tuple[torch.nn.Module, str]:
    module_name, _, attr = param_name.rpartition(".")
    return model.get_submodule(module_name), attr


# ---------------------------------------------------------------- tokenizer and chat template


@dataclass(slots=True)
class LoadedTokenizer:
    """A `tokenizers.Tokenizer` plus what `tokenizer_config.json` adds to it."""

    tokenizer: Tokenizer
    chat_template: str | None = None
    bos_token: str | None = None
    eos_token: str | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    special_token_ids: frozenset[int] = frozenset()
    # {"eos_token": "<|im_end|>", "pad_token": ...}: the names templates may read.
    named_special_tokens: dict[str, str] = field(default_factory=dict)
    # (source, compiled jinja template): compiling costs milliseconds and a server renders
    # once per chat request. Keyed on the source, since callers may swap the template.
    _compiled_template: tuple[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def vocab_size(self) -> int:
        return int(self.tokenizer.get_vocab_size(with_added_tokens=True))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=add_special_tokens).ids)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens))

    def apply_chat_template(
        self, messages: list[dict[str, Any]], add_generation_prompt: bool = True, **extra: Any
    ) -> str:
        """Render a conversation to the prompt text; encode it with add_special_tokens=False
        (templates write their own bos)."""
        if not self.chat_template:
            raise ConfigError("this model has no chat template (tokenizer_config.json)")
        return _render_chat(self, messages, add_generation_prompt, extra)


def load_tokenizer(model_dir: str | Path) -> LoadedTokenizer:
    from tokenizers import Tokenizer  # deferred: only needed once a model is really loaded

    path = Path(model_dir)
    tok_file = path / "tokenizer.json"
    if not tok_file.is_file():
        raise ConfigError(f"{path} has no tokenizer.json (the fast-tokenizer file is required)")
    try:
        tokenizer = Tokenizer.from_file(str(tok_file))
    except Exception as exc:  # tokenizers raises a bare Exception on malformed files
        raise ConfigError(f"cannot read {tok_file}: {exc}") from None
    cfg: dict[str, Any] = {}
    cfg_file = path / "tokenizer_config.json"
    if cfg_file.is_file():
        try:
            cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{cfg_file} is not valid JSON: {exc}") from None
    # transformers 5 saves the template as chat_template.jinja, 4.x inside tokenizer_config.json;
    # when both exist transformers renders the .jinja file, so it wins here too.
    jinja_file = path / "chat_template.jinja"
    if jinja_file.is_file():
        template: str | None = jinja_file.read_text(encoding="utf-8")
    else:
        template = _chat_template(cfg.get("chat_template"))
    eos, bos = _token_text(cfg.get("eos_token")), _token_text(cfg.get("bos_token"))
    eos_id = tokenizer.token_to_id(eos) if eos is not None else None
    eos_ids = [eos_id] if eos_id is not None else []
    specials = {
        int(k) for k, v in (cfg.get("added_tokens_decoder") or {}).items() if v.get("special")
    }
    specials.update(t.id for t in _added_tokens(tokenizer) if t.special)
    named = {
        name: text for name in _NAMED_SPECIALS if (text := _token_text(cfg.get(name))) is not None
    }
    return LoadedTokenizer(
        tokenizer, template, bos, eos, eos_ids, frozenset(specials), named_special_tokens=named
    )


_NAMED_SPECIALS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


@dataclass(slots=True)
class _AddedToken:
    id: int
    special: bool


def _added_tokens(tokenizer: Tokenizer) -> list[_AddedToken]:
    decoder = tokenizer.get_added_tokens_decoder()  # {id: AddedToken}
    return [_AddedToken(int(i), bool(t.special)) for i, t in decoder.items()]


def _chat_template(value: Any) -> str | None:
    if isinstance(value, list):  # [{"name": "default", "template": ...}, ...]
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        return named.get("default") or next(iter(named.values()), None)
    return value if isinstance(value, str) else None


def _token_text(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("content")
    return value if isinstance(value, str) else None


def _render_chat(
    tok: LoadedTokenizer,
    messages: list[dict[str, Any]],
    add_generation_prompt: bool,
    extra: dict[str, Any],
) -> str:
    from jinja2 import TemplateError
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise ConfigError(f"chat template refused the conversation: {message}")

    # Jinja's own tojson escapes HTML characters; templates expect plain JSON with these knobs.
    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    source = tok.chat_template or ""
    try:
        if tok._compiled_template is None or tok._compiled_template[0] != source:
            # The same environment settings HF uses, so published templates render identically.
            env = ImmutableSandboxedEnvironment(
                trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
            )
            env.filters["tojson"] = tojson
            env.globals["raise_exception"] = raise_exception
            env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
            tok._compiled_template = (source, env.from_string(source))
        # What transformers passes: named special tokens, then `tools` and `documents` (None
        # unless given, so `tools is none` holds), then the caller's switches.
        context: dict[str, Any] = {
            **tok.named_special_tokens,
            "tools": None,
            "documents": None,
            **extra,
        }
        # Keys whose value is None are dropped, as transformers does: OpenAI clients send
        # content=None beside tool_calls, and templates test `is defined`, not `is none`.
        clean = [{k: v for k, v in m.items() if v is not None} for m in messages]
        return tok._compiled_template[1].render(
            messages=clean, add_generation_prompt=add_generation_prompt, **context
        )
    except TemplateError as exc:
        raise ConfigError(f"chat template failed to render: {exc}") from None


# ---------------------------------------------------------------- which folder to load


def resolve_model_dir(model: str | Path | None, cache_dir: Path | None = None) -> Path:
    """A local checkpoint folder, or (model None) the tiny random-weights model, generated
    into the cache on first use."""
    if model is None:
        from reference_engine.tiny_model import ensure_tiny_model

        if cache_dir is None:
            from reference_engine.cache_dir import default_cache_dir

            cache_dir = default_cache_dir()
        return ensure_tiny_model(cache_dir)
    path = Path(model).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"model {str(model)!r} is not a local folder: this engine loads local Hugging Face "
            "checkpoints only (download one first, e.g. Qwen/Qwen3-0.6B into a folder)"
        )
    return path


def load_model_config(engine_config: EngineConfig) -> ModelConfig:
    """The ModelConfig for `engine_config.model`, with `model_dir` set for the runner."""
    return ModelConfig.from_pretrained(
        resolve_model_dir(engine_config.model, engine_config.cache_dir)
    )
