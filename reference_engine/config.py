"""Model and engine configuration.

`ModelConfig` is read from a Hugging Face `config.json`; `EngineConfig` holds the knobs a
serving engine exposes (vLLM's `EngineArgs` / SGLang's `ServerArgs` vocabulary).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# Architectures this engine implements, by the name HF writes into `config.json`.
SUPPORTED_ARCHITECTURES = (
    "Qwen3ForCausalLM",
    "LlamaForCausalLM",
    "Qwen2ForCausalLM",
    "MistralForCausalLM",
    "Qwen3MoeForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "Qwen3_5ForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "GptOssForCausalLM",
    "Gemma3ForCausalLM",
)

_DTYPE_NAMES = {"float32", "float64", "float16", "bfloat16"}


class ConfigError(ValueError):
    """A checkpoint or engine setting the engine cannot use; the message says why."""


@dataclass(slots=True)
class ModelConfig:
    architecture: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    # Only "default" and "llama3" RoPE are implemented; the dict holds their parameters.
    rope_scaling: dict[str, Any] | None = None
    max_position_embeddings: int = 4096
    tie_word_embeddings: bool = False
    qk_norm: bool = False  # Qwen3: RMSNorm on each head of q and k before RoPE
    qkv_bias: bool = False  # Qwen2 always; Llama / Qwen3 when `attention_bias`
    o_bias: bool = False  # Llama / Qwen3 `attention_bias` also covers o_proj; Qwen2 does not
    mlp_bias: bool = False
    eos_token_ids: list[int] = field(default_factory=list)
    bos_token_id: int | None = None
    torch_dtype: str = "float32"  # the checkpoint's own dtype
    model_dir: Path | None = None  # where weights are loaded from; None means random init
    random_weights: bool = False  # set by the tiny built-in model so every output can say so
    # SamplingParams defaults the checkpoint recommends (generation_config.json), e.g.
    # Qwen3's temperature 0.6 / top_p 0.95 / top_k 20; vLLM applies them by default too.
    generation_defaults: dict[str, float | int] = field(default_factory=dict)
    # config.json's `quantization_config` (a compressed-tensors checkpoint; see
    # layers/quantization/checkpoint.py); None for a float checkpoint.
    quantization_config: dict[str, Any] | None = None
    # Per layer: its sliding-window length, or None for full attention (Mistral: every layer;
    # Qwen2/Qwen3 `layer_types`: some). Empty means every layer attends to the whole context.
    sliding_windows: list[int | None] = field(default_factory=list)
    # The whole config.json, for families whose extra fields only they read (MLA ranks...).
    hf_config: dict[str, Any] = field(default_factory=dict)
    # Mixture of experts (Qwen3-MoE): 0 experts means every layer has a dense MLP.
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    norm_topk_prob: bool = True  # renormalise the k routing weights to sum to 1
    decoder_sparse_step: int = 1  # every n-th layer is sparse ...
    mlp_only_layers: list[int] = field(default_factory=list)  # ... except these

    def is_moe_layer(self, layer_idx: int) -> bool:
        return (
            self.num_experts > 0
            and layer_idx not in self.mlp_only_layers
            and (layer_idx + 1) % self.decoder_sparse_step == 0
        )

    @property
    def eos_token_id(self) -> int | None:
        return self.eos_token_ids[0] if self.eos_token_ids else None

    @property
    def q_size(self) -> int:
        return self.num_attention_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_key_value_heads * self.head_dim

    @property
    def kv_lora_rank(self) -> int | None:
        """MLA (DeepSeek-V2/V3): the rank of the compressed KV latent; None for K/V heads."""
        rank = self.hf_config.get("kv_lora_rank")
        return int(rank) if rank else None

    def kv_cache_shapes(self, num_kv_heads: int | None = None) -> list[tuple[tuple[int, int], ...]]:
        """Per layer, the (heads, dim) of each tensor its paged cache holds per token: K and
        V per KV head (`num_kv_heads`: a tensor-parallel rank's share), or MLA's single
        latent (compressed KV + the decoupled RoPE key), which every rank holds whole."""
        if self.kv_lora_rank is not None:
            latent = (1, self.kv_lora_rank + int(self.hf_config["qk_rope_head_dim"]))
            if self.hf_config.get("index_topk"):  # DeepSeek-V3.2: + the DSA indexer's key
                return [
                    (latent, (1, int(self.hf_config["index_head_dim"])))
                ] * self.num_hidden_layers
            return [(latent,)] * self.num_hidden_layers
        kv = (num_kv_heads or self.num_key_value_heads, self.head_dim)
        # Linear-attention layers of a hybrid keep a fixed-size state instead (no blocks).
        return [() if t == "linear_attention" else (kv, kv) for t in self.layer_types]

    @property
    def layer_types(self) -> list[str]:
        """Per layer: "full_attention", "sliding_attention" or "linear_attention" (hybrids)."""
        types = self.hf_config.get("layer_types")
        if types and len(types) == self.num_hidden_layers:
            return [str(t) for t in types]
        return ["full_attention"] * self.num_hidden_layers

    @property
    def has_recurrent_state(self) -> bool:
        """Hybrid models: some layers carry a per-request recurrent state (GatedDeltaNet)."""
        return "linear_attention" in self.layer_types

    @property
    def kv_elems_per_token(self) -> int:
        """Cache elements one token takes across all layers."""
        return sum(h * d for layer in self.kv_cache_shapes() for h, d in layer)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], model_dir: Path | None = None) -> ModelConfig:
        raw = _text_side(raw)
        archs = raw.get("architectures") or []
        arch = next((a for a in archs if a in SUPPORTED_ARCHITECTURES), None)
        if arch is None:
            raise ConfigError(
                f"unsupported architecture {archs or '(none given)'}; "
                f"this engine implements {', '.join(SUPPORTED_ARCHITECTURES)}"
            )
        try:
            hidden = int(raw["hidden_size"])
            heads = int(raw["num_attention_heads"])
            cfg = cls(
                architecture=arch,
                vocab_size=int(raw["vocab_size"]),
                hidden_size=hidden,
                intermediate_size=int(raw["intermediate_size"]),
                num_hidden_layers=int(raw["num_hidden_layers"]),
                num_attention_heads=heads,
                # MLA has no KV heads (one latent serves every head); its config's value is unused.
                num_key_value_heads=heads
                if raw.get("kv_lora_rank")
                else int(raw.get("num_key_value_heads") or heads),
                head_dim=int(raw.get("head_dim") or hidden // heads),
                rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
                max_position_embeddings=int(raw.get("max_position_embeddings", 4096)),
                tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
                torch_dtype=str(raw.get("torch_dtype") or raw.get("dtype") or "float32"),
                bos_token_id=raw.get("bos_token_id"),
                eos_token_ids=_as_id_list(raw.get("eos_token_id")),
                model_dir=model_dir,
                random_weights=bool(raw.get("atlas_random_weights", False)),
                quantization_config=raw.get("quantization_config"),
            )
        except KeyError as exc:
            raise ConfigError(f"config.json lacks the field {exc.args[0]!r}") from None
        cfg.rope_theta, cfg.rope_scaling = _rope_settings(raw)
        bias = bool(raw.get("attention_bias", False))
        cfg.qk_norm = arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
        if arch == "Qwen3MoeForCausalLM":
            _moe_settings(cfg, raw)
        cfg.qkv_bias = True if arch == "Qwen2ForCausalLM" else bias
        cfg.o_bias = False if arch == "Qwen2ForCausalLM" else bias
        cfg.mlp_bias = bool(raw.get("mlp_bias", False))
        cfg.sliding_windows = _sliding_windows(raw, arch, cfg.num_hidden_layers)
        cfg.hf_config = dict(raw)
        if raw.get("hidden_act", "silu") != "silu":
            raise ConfigError(f"only the silu activation is implemented, got {raw['hidden_act']}")
        if cfg.num_attention_heads % cfg.num_key_value_heads:
            raise ConfigError("num_attention_heads must be a multiple of num_key_value_heads")
        return cfg

    @classmethod
    def from_pretrained(cls, model_dir: str | Path) -> ModelConfig:
        """Read `config.json` (and `generation_config.json` for the full eos list)."""
        path = Path(model_dir)
        cfg_file = path / "config.json"
        if not cfg_file.is_file():
            raise ConfigError(f"{path} is not a model folder: no config.json in it")
        try:
            raw = json.loads(cfg_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{cfg_file} is not valid JSON: {exc}") from None
        cfg = cls.from_dict(raw, model_dir=path)
        gen_file = path / "generation_config.json"
        if gen_file.is_file():
            try:
                gen = json.loads(gen_file.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                gen = {}  # optional file: a broken one only costs the extra eos ids
            # Chat models list their end-of-turn token only here (Qwen3: <|im_end|>).
            for tok in _as_id_list(gen.get("eos_token_id")):
                if tok not in cfg.eos_token_ids:
                    cfg.eos_token_ids.append(tok)
            cfg.generation_defaults = sampling_defaults(gen)
        return cfg


# generation_config.json key -> SamplingParams field, for the keys vLLM also honours.
_GENERATION_KEYS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
    "max_new_tokens": "max_tokens",
}


def sampling_defaults(gen: dict[str, Any]) -> dict[str, float | int]:
    """The sampling fields a generation_config.json sets; anything not a number is skipped
    (the file is advisory: a bad value must not stop the model from loading)."""
    out: dict[str, float | int] = {}
    for key, name in _GENERATION_KEYS.items():
        value = gen.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = int(value) if name in ("top_k", "max_tokens") else float(value)
    return out


# Multimodal checkpoints whose language model's fields sit under "text_config".
_TEXT_CONFIG_ARCHITECTURES = ("Qwen3_5ForConditionalGeneration",)


def _text_side(raw: dict[str, Any]) -> dict[str, Any]:
    """A vision-language config.json seen from its language model: text_config's fields at
    the top (the top level's own keys, e.g. architectures and token ids, kept), the vision
    config left under "vision_config" for the family to read."""
    archs = raw.get("architectures") or []
    text = raw.get("text_config")
    if not isinstance(text, dict) or not any(a in _TEXT_CONFIG_ARCHITECTURES for a in archs):
        return raw
    return {**text, **{k: v for k, v in raw.items() if k != "text_config"}}


def _sliding_windows(raw: dict[str, Any], arch: str, num_layers: int) -> list[int | None]:
    """Each layer's window as transformers applies it: Mistral slides every layer;
    Qwen2/Qwen3 slide the layers `layer_types` marks (from `max_window_layers` on) when
    `use_sliding_window` is set. A window W lets position q see keys q-W+1 .. q."""
    window = raw.get("sliding_window")
    if arch == "MistralForCausalLM":
        if "layer_types" in raw:
            raise ConfigError("Mistral with layer_types (Ministral) is not implemented")
        return [int(window)] * num_layers if window else []
    if arch in ("GptOssForCausalLM", "Gemma3ForCausalLM") and window:  # layer_types decide
        types = raw.get("layer_types") or []
        return [int(window) if t == "sliding_attention" else None for t in types]
    if not raw.get("use_sliding_window") or not window:
        return []
    types = raw.get("layer_types") or [
        "sliding_attention" if i >= int(raw.get("max_window_layers", 0)) else "full_attention"
        for i in range(num_layers)
    ]
    if len(types) != num_layers or set(types) - {"sliding_attention", "full_attention"}:
        raise ConfigError(f"layer_types {types} does not fit {num_layers} attention layers")
    return [int(window) if t == "sliding_attention" else None for t in types]


def _moe_settings(cfg: ModelConfig, raw: dict[str, Any]) -> None:
    # transformers 5 writes num_local_experts (num_experts is its attribute alias).
    cfg.num_experts = int(raw.get("num_experts") or raw.get("num_local_experts") or 0)
    cfg.num_experts_per_tok = int(raw.get("num_experts_per_tok") or 0)
    cfg.moe_intermediate_size = int(raw.get("moe_intermediate_size") or 0)
    cfg.norm_topk_prob = bool(raw.get("norm_topk_prob", False))
    cfg.decoder_sparse_step = int(raw.get("decoder_sparse_step") or 1)
    cfg.mlp_only_layers = [int(i) for i in raw.get("mlp_only_layers") or []]
    if cfg.num_experts < 1 or not 0 < cfg.num_experts_per_tok <= cfg.num_experts:
        raise ConfigError(
            f"a mixture-of-experts config needs 0 < num_experts_per_tok "
            f"({cfg.num_experts_per_tok}) <= num_experts ({cfg.num_experts})"
        )
    if cfg.moe_intermediate_size < 1:
        raise ConfigError("a mixture-of-experts config needs moe_intermediate_size > 0")


def _as_id_list(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, list):
        return [int(v) for v in value]
    return [int(value)]


def _rope_settings(raw: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    # transformers 5 writes `rope_parameters`; older checkpoints `rope_theta` + `rope_scaling`.
    params = raw.get("rope_parameters") or {}
    scaling = raw.get("rope_scaling") or params
    theta = float(params.get("rope_theta", raw.get("rope_theta", 10000.0)))
    rope_type = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
    if rope_type in (None, "default"):
        return theta, None
    if rope_type not in ("llama3", "yarn"):
        raise ConfigError(
            f"RoPE scaling {rope_type!r} is not implemented (default, llama3 and yarn are)"
        )
    if rope_type == "yarn" and not scaling.get("original_max_position_embeddings"):
        raise ConfigError("yarn RoPE scaling needs original_max_position_embeddings")
    return theta, {**dict(scaling), "rope_type": rope_type}


PrefixCaching = Literal["none", "hash", "radix"]
PreemptionMode = Literal["recompute", "swap"]
SchedulingPolicy = Literal["fcfs", "priority"]


@dataclass(slots=True)
class EngineConfig:
    model: str | None = None  # a local HF checkpoint folder; None means the tiny built-in model
    dtype: str = "float32"  # "auto" takes the checkpoint's dtype on CUDA, float32 on CPU
    device: str = "cpu"  # "cpu", "cuda" or "auto"
    cache_dir: Path | None = None  # where the tiny model is generated; None: atlas's default
    block_size: int = 16
    # KV capacity: an explicit block count wins; else a byte budget; else enough blocks for
    # `max_num_seqs` full-length sequences, capped at DEFAULT_KV_BYTES.
    num_gpu_blocks: int | None = None
    kv_cache_memory: int | None = None
    max_num_seqs: int = 32
    max_num_batched_tokens: int = 512  # per-step token budget shared by prefill and decode
    max_model_len: int | None = None  # None: the model's max_position_embeddings, capped
    enable_chunked_prefill: bool = True
    prefix_caching: PrefixCaching = "hash"
    preemption_mode: PreemptionMode = "recompute"
    num_cpu_blocks: int = 0  # host KV pool for swap preemption
    # Hierarchical KV (kv_tiers/): evicted prefix-cache blocks go to host memory, then disk.
    kv_host_blocks: int = 0  # 0: no host tier
    kv_disk_dir: str | None = None  # None: no disk tier
    kv_disk_blocks: int = 4096
    kv_tier_policy: str = "write_back"  # or "write_through"
    kv_shared_url: str | None = None  # redis://host:port/db: a tier several instances share
    scheduling_policy: SchedulingPolicy = "fcfs"
    cuda_graph_batch_sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 24, 32)
    enforce_eager: bool = False  # True: never capture CUDA graphs
    # float32 on a CPU: multiply with oneDNN-prepacked weights (faster; weights take 2x memory)
    cpu_prepack: bool = True
    # "auto": requests that leave a sampling field unset take the checkpoint's
    # generation_config.json value (vLLM's default); "none": the library defaults.
    generation_config: Literal["auto", "none"] = "auto"
    # Weight quantization on the fly: "int8" (W8A16), "int4" (W4A16, group 128), "fp8"
    # (e4m3, 128x128 blocks); None runs the checkpoint as stored (layers/quantization/).
    quantization: str | None = None
    # "auto": the KV cache in the model's dtype; "int8" / "fp8": one byte per value plus a
    # float32 scale per token per head (layers/quantization/kv_cache.py).
    kv_cache_dtype: str = "auto"
    # Multi-LoRA (lora/): adapters per batch (device slots) and the largest rank they hold.
    enable_lora: bool = False
    max_loras: int = 1
    max_lora_rank: int = 16
    weight_version: str = "default"  # label of the loaded weights in every output (SGLang's)
    seed: int = 0
    # vLLM's speculative_config dict, e.g. {"method": "ngram", "num_speculative_tokens": 4}
    # or {"model": "path/to/draft", "num_speculative_tokens": 4} (spec_decode/config.py).
    speculative_config: dict[str, Any] | None = None
    # Ranks one model runs on (reference_engine/distributed/): world = tp * pp * cp. Expert
    # parallelism spans the tensor-parallel ranks (ep = tp) or, with tp = 1, ep ranks that
    # each run the whole attention. Context parallelism stripes every sequence's tokens and
    # KV cache over cp ranks (context_parallel.py); it combines with tensor and pipeline
    # parallelism.
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    expert_parallel_size: int = 1
    context_parallel_size: int = 1
    # Two-batch overlap (SGLang's --enable-two-batch-overlap): each expert-parallel MoE layer
    # splits its tokens in two so one half's all-to-all travels while the other's experts
    # compute (distributed/two_batch_overlap.py).
    enable_two_batch_overlap: bool = False
    distributed_backend: Literal["auto", "gloo", "nccl"] = "auto"  # auto: nccl on CUDA
    # A collective that waits longer than this means a rank hung or died: the engine stops.
    distributed_timeout_s: float = 300.0
    # Batch-invariant mode: logits bitwise identical alone or in any batch (batch_invariant.py)
    deterministic: bool = False
    # Overlap scheduling (vLLM's async scheduling): step N+1 is scheduled and built while
    # step N's forward pass runs; tokens are handled one step late (overlap_scheduler.py).
    async_scheduling: bool = False
    # Image tokens the encoder cache holds (multimodal/encoder_cache.py); None: its default.
    encoder_cache_tokens: int | None = None

    DEFAULT_KV_BYTES = 1 << 30
    DEFAULT_MAX_MODEL_LEN = 4096

    def __post_init__(self) -> None:
        self.verify()

    @property
    def world_size(self) -> int:
        """Processes one engine runs on (the driver counts as rank 0)."""
        tp_or_ep = max(self.tensor_parallel_size, self.expert_parallel_size)
        return tp_or_ep * self.pipeline_parallel_size * self.context_parallel_size

    def verify(self) -> None:
        from reference_engine.distributed.parallel_config import verify_sizes

        verify_sizes(self)
        if self.enable_two_batch_overlap and self.expert_parallel_size < 2:
            raise ConfigError("two-batch overlap needs expert parallelism (expert_parallel_size > 1)")
        if self.dtype not in _DTYPE_NAMES | {"auto"}:
            raise ConfigError(
                f"dtype must be one of {sorted(_DTYPE_NAMES)} or auto, got {self.dtype}"
            )
        if self.generation_config not in ("auto", "none"):
            raise ConfigError(
                f"generation_config must be auto or none, got {self.generation_config}"
            )
        if self.quantization not in (None, "int8", "int4", "fp8"):
            raise ConfigError(
                f"quantization must be int8, int4 or fp8 (or None), got {self.quantization}"
            )
        if self.max_loras < 1 or self.max_lora_rank < 1:
            raise ConfigError("max_loras and max_lora_rank must be positive")
        if self.kv_cache_dtype not in ("auto", "int8", "fp8"):
            raise ConfigError(
                f"kv_cache_dtype must be auto, int8 or fp8, got {self.kv_cache_dtype}"
            )
        if self.device not in ("cpu", "cuda", "auto"):
            raise ConfigError(f"device must be cpu, cuda or auto, got {self.device}")
        if self.block_size < 1:
            raise ConfigError(f"block_size must be positive, got {self.block_size}")
        if self.num_gpu_blocks is not None and self.num_gpu_blocks < 1:
            raise ConfigError(f"num_gpu_blocks must be positive, got {self.num_gpu_blocks}")
        if self.max_num_seqs < 1 or self.max_num_batched_tokens < 1:
            raise ConfigError("max_num_seqs and max_num_batched_tokens must be positive")
        if self.prefix_caching not in ("none", "hash", "radix"):
            raise ConfigError(
                f"prefix_caching must be none, hash or radix, got {self.prefix_caching}"
            )
        if self.kv_tier_policy not in ("write_back", "write_through"):
            raise ConfigError(
                f"kv_tier_policy must be write_back or write_through, got {self.kv_tier_policy}"
            )
        if self.kv_host_blocks < 0 or self.kv_disk_blocks < 1:
            raise ConfigError("kv_host_blocks must be >= 0 and kv_disk_blocks >= 1")
        tiered = self.kv_host_blocks or self.kv_disk_dir or self.kv_shared_url
        if tiered and self.prefix_caching == "none":
            raise ConfigError("KV tiers keep prefix-cache blocks: they need prefix caching")
        if self.preemption_mode not in ("recompute", "swap"):
            raise ConfigError(
                f"preemption_mode must be recompute or swap, got {self.preemption_mode}"
            )
        if self.preemption_mode == "swap" and self.num_cpu_blocks < 1:
            raise ConfigError("preemption_mode='swap' needs num_cpu_blocks > 0 (the host KV pool)")
        if self.scheduling_policy not in ("fcfs", "priority"):
            raise ConfigError(
                f"scheduling_policy must be fcfs or priority, got {self.scheduling_policy}"
            )
        if any(b < 1 for b in self.cuda_graph_batch_sizes):
            raise ConfigError("cuda_graph_batch_sizes must be positive")
        from reference_engine.spec_decode.config import SpeculativeConfig

        try:
            SpeculativeConfig.from_value(self.speculative_config)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def resolved_device(self) -> str:
        if self.device == "cpu":
            return "cpu"
        import torch  # deferred: the analyzer side of atlas installs without torch

        if torch.cuda.is_available():
            return "cuda"
        if self.device == "cuda":
            raise ConfigError(
                f"device='cuda' but this torch ({torch.__version__}) sees no CUDA device; "
                "use device='cpu' or 'auto'"
            )
        return "cpu"

    def resolved_dtype(self, model: ModelConfig) -> str:
        if self.dtype != "auto":
            return self.dtype
        # bf16 matmuls on CPU are slow and lossy; the checkpoint dtype only pays off on a GPU.
        if self.resolved_device() != "cuda":
            return "float32"
        if model.torch_dtype not in _DTYPE_NAMES:
            # e.g. a quantised checkpoint: say so here rather than fail deep in the runner.
            raise ConfigError(
                f"dtype='auto' takes the checkpoint's dtype, {model.torch_dtype!r}, which this "
                f"engine cannot run; pass one of {sorted(_DTYPE_NAMES)}"
            )
        return model.torch_dtype

    def resolved_max_model_len(self, model: ModelConfig) -> int:
        if self.max_model_len is None:
            return min(model.max_position_embeddings, self.DEFAULT_MAX_MODEL_LEN)
        if self.max_model_len > model.max_position_embeddings:
            raise ConfigError(
                f"max_model_len {self.max_model_len} exceeds the model's "
                f"max_position_embeddings {model.max_position_embeddings}"
            )
        return self.max_model_len

    def kv_bytes_per_block(self, model: ModelConfig) -> int:
        elem = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}[self.resolved_dtype(model)]
        if self.kv_cache_dtype != "auto":
            # one byte per value plus a float32 scale per (token, head) row
            shapes = model.kv_cache_shapes()
            return self.block_size * sum(h * (d + 4) for layer in shapes for h, d in layer)
        # Every cached tensor of every layer (K and V, or MLA's latent), one block of tokens.
        return self.block_size * model.kv_elems_per_token * elem

    def resolved_num_blocks(self, model: ModelConfig) -> int:
        """How many KV blocks the device cache holds (the block pool's size)."""
        if self.num_gpu_blocks is not None:
            return self.num_gpu_blocks
        per_block = self.kv_bytes_per_block(model)
        if self.kv_cache_memory is not None:
            blocks = self.kv_cache_memory // per_block
            if blocks < 1:
                raise ConfigError(
                    f"kv_cache_memory {self.kv_cache_memory} bytes holds no block "
                    f"({per_block} bytes each)"
                )
            return blocks
        max_len = self.resolved_max_model_len(model)
        wanted = self.max_num_seqs * -(-max_len // self.block_size)
        return max(1, min(wanted, self.DEFAULT_KV_BYTES // per_block))

    def max_blocks_per_seq(self, model: ModelConfig) -> int:
        return -(-self.resolved_max_model_len(model) // self.block_size)
