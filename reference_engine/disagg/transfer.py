"""What the two sides of a KV transfer agree on: the cache layout, the transfer's identity
(`kv_transfer_params`, vLLM's name for them), and what the sender describes."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reference_engine.engine import Engine


class TransferError(RuntimeError):
    """A transfer that cannot go on; the decode side then computes the prompt itself."""


@dataclass(frozen=True, slots=True)
class KVLayout:
    """Both instances must hold K/V in the same shape, dtype and model for blocks to move
    as bytes. Checked in the handshake; a mismatch is refused, never reinterpreted."""

    num_layers: int
    block_size: int
    cache_shapes: str  # each cache tensor of a layer: [block_size, heads, row width]
    dtype: str  # the cache's storage dtype (int8 / fp8 for a quantized cache)
    model_fingerprint: str  # config and a sample of the weights: same model, same KV

    @classmethod
    def of(cls, engine: Engine) -> KVLayout:
        cfg = engine.model_config
        runner = engine.runner
        h = hashlib.blake2b(digest_size=12)
        for name in ("architecture", "vocab_size", "hidden_size", "num_hidden_layers",
                     "num_attention_heads", "num_key_value_heads", "head_dim", "rope_theta"):  # fmt: skip
            h.update(f"{name}={getattr(cfg, name)};".encode())
        for param in list(runner.model.parameters())[:2]:  # embedding and first norm/proj
            h.update(param.detach().flatten()[:256].float().cpu().numpy().tobytes())
        return cls(
            num_layers=cfg.num_hidden_layers,
            block_size=engine.block_size,
            cache_shapes=str([list(c.shape[1:]) for c in runner.kv_caches[0]]),
            dtype=str(runner.kv_caches[0][0].dtype).removeprefix("torch."),
            model_fingerprint=h.hexdigest(),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def check_same(self, other: dict[str, Any]) -> None:
        mine = self.to_json()
        diff = [
            f"{k}: here {mine[k]!r}, remote {other.get(k)!r}"
            for k in mine
            if other.get(k) != mine[k]
        ]
        if diff:
            raise TransferError("the prefill instance's KV layout differs: " + "; ".join(diff))


@dataclass(frozen=True, slots=True)
class RemoteKV:
    """Where a prefilled request's KV waits: the prefill response's `kv_transfer_params`,
    passed verbatim to the decode server (vLLM's do_remote_prefill / remote_host / ...)."""

    remote_engine_id: str
    remote_host: str
    remote_port: int
    transfer_id: str
    num_tokens: int

    def to_params(self) -> dict[str, Any]:
        return {"do_remote_prefill": True, **asdict(self)}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RemoteKV:
        """Parse, with a ValueError naming the field a caller got wrong."""
        if params.get("do_remote_prefill") is not True:
            raise ValueError(
                "kv_transfer_params must say do_remote_prefill: true on a decode server"
            )
        fields: dict[str, Any] = {}
        for name, kind in (("remote_engine_id", str), ("remote_host", str),
                           ("remote_port", int), ("transfer_id", str), ("num_tokens", int)):  # fmt: skip
            value = params.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"kv_transfer_params.{name} must be a {kind.__name__}")
            fields[name] = value
        if not 0 < fields["remote_port"] < 65536 or fields["num_tokens"] < 0:
            raise ValueError("kv_transfer_params has an out-of-range remote_port or num_tokens")
        return cls(**fields)

    @property
    def endpoint(self) -> str:
        return f"tcp://{self.remote_host}:{self.remote_port}"


@dataclass(frozen=True, slots=True)
class TransferInfo:
    """The sender's answer to a handshake: what it pinned and how it is laid out."""

    token_ids: list[int]  # the pinned prefix; its KV is what a pull returns
    layout: dict[str, Any]
    num_blocks: int
