"""One tier entry: a KV block (every layer's cache tensors) as checksummed bytes.

    magic "ATKV1\\n" | header length (4 bytes, little endian) | JSON header | payload

The header names the layout (a fingerprint of model, dtype and shapes), each layer's
shape, the payload's length and its BLAKE2b digest. `decode_entry` refuses anything
that does not match exactly: a truncated file, a flipped bit, another model's KV.
"""

from __future__ import annotations

import hashlib
import json
import struct

import torch

from reference_engine.disagg.kv_io import from_bytes, to_bytes

MAGIC = b"ATKV1\n"


class EntryError(ValueError):
    """A tier entry that must not be used (corrupt, truncated, or another layout's)."""


def encode_entry(layers: list[torch.Tensor], layout: str) -> bytes:
    payload = b"".join(bytes(to_bytes(t)) for t in layers)
    header = json.dumps(
        {
            "layout": layout,
            "shapes": [list(t.shape) for t in layers],
            "dtype": str(layers[0].dtype).removeprefix("torch."),
            "length": len(payload),
            "blake2b": hashlib.blake2b(payload, digest_size=16).hexdigest(),
        }
    ).encode()
    return MAGIC + struct.pack("<I", len(header)) + header + payload


def decode_entry(data: bytes, layout: str) -> list[torch.Tensor]:
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise EntryError("not a KV tier entry (bad magic)")
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    try:
        header = json.loads(data[start : start + size])
        payload = data[start + size :]
        if header["layout"] != layout:
            raise EntryError("the entry was written for another model or KV layout")
        if len(payload) != header["length"]:
            raise EntryError(f"truncated: {len(payload)} of {header['length']} payload bytes")
        if hashlib.blake2b(payload, digest_size=16).hexdigest() != header["blake2b"]:
            raise EntryError("checksum mismatch")
        layers, offset = [], 0
        for shape in header["shapes"]:
            count = (
                int(torch.Size(shape).numel())
                * torch.empty((), dtype=_dtype(header["dtype"])).element_size()
            )
            layers.append(
                from_bytes(payload[offset : offset + count], header["dtype"], tuple(shape))
            )
            offset += count
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
        if isinstance(exc, EntryError):
            raise
        raise EntryError(f"unreadable header: {exc}") from None
    return layers


def _dtype(name: str) -> torch.dtype:
    from reference_engine.disagg.kv_io import DTYPES

    if name not in DTYPES:
        raise EntryError(f"unknown dtype {name!r}")
    return DTYPES[name]
