"""Image processor (transformers' Qwen2VLImageProcessor, which Qwen3.5 uses): decode, resize
to a multiple of the patch grid, normalise, cut into patches.

`smart_resize` keeps the aspect ratio, rounds each side to a multiple of
patch_size * merge_size (so merge squares tile the image) and keeps the pixel count within
[min_pixels, max_pixels], so the number of image tokens is bounded whatever the upload.
Patches are listed merge square by merge square (the encoder's merger concatenates each
square's rows), every patch repeated `temporal_patch_size` times (a still image is a
one-frame video to the Conv3d embedding).

Decoding guards the engine: bytes, pixel count and format are checked before any pixel is
decompressed (`load_image`), and every failure is an ImageError the server turns into a 400.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reference_engine.multimodal.inputs import ProcessedImage

MAX_IMAGE_BYTES = 20 << 20  # an encoded upload; larger is refused before decoding
MAX_IMAGE_PIXELS = 50_000_000  # decoded pixels (a "decompression bomb" is small encoded)
MAX_ASPECT_RATIO = 200  # as transformers' smart_resize


class ImageError(ValueError):
    """An image that cannot be used: unreadable, corrupt, too large, or of a refused source.
    The message is fit to show a user."""


@dataclass(frozen=True, slots=True)
class ImageProcessorConfig:
    patch_size: int = 16
    temporal_patch_size: int = 2
    merge_size: int = 2
    min_pixels: int = 65536  # Qwen3.5's preprocessor_config.json (size.shortest_edge)
    max_pixels: int = 16777216  # (size.longest_edge)
    image_mean: tuple[float, ...] = (0.5, 0.5, 0.5)
    image_std: tuple[float, ...] = (0.5, 0.5, 0.5)

    @classmethod
    def from_pretrained(cls, model_dir: Path | None, vision: dict[str, Any]) -> ImageProcessorConfig:
        """preprocessor_config.json when the checkpoint has one; the vision config's patch
        geometry and Qwen3.5's defaults otherwise."""
        raw: dict[str, Any] = {}
        path = model_dir / "preprocessor_config.json" if model_dir is not None else None
        if path is not None and path.is_file():
            raw = json.loads(path.read_text(encoding="utf-8"))
        size = raw.get("size") or {}
        default = cls()
        return cls(
            patch_size=int(raw.get("patch_size", vision.get("patch_size", default.patch_size))),
            temporal_patch_size=int(
                raw.get("temporal_patch_size", vision.get("temporal_patch_size", 2))
            ),
            merge_size=int(raw.get("merge_size", vision.get("spatial_merge_size", 2))),
            min_pixels=int(raw.get("min_pixels", size.get("shortest_edge", default.min_pixels))),
            max_pixels=int(raw.get("max_pixels", size.get("longest_edge", default.max_pixels))),
            image_mean=tuple(float(v) for v in raw.get("image_mean", default.image_mean)),
            image_std=tuple(float(v) for v in raw.get("image_std", default.image_std)),
        )


def smart_resize(
    height: int, width: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """(height, width), each a multiple of `factor`, pixels within bounds, aspect kept."""
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ImageError(
            f"the image's aspect ratio is {max(height, width) / min(height, width):.0f}:1; "
            f"at most {MAX_ASPECT_RATIO}:1 is accepted"
        )
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


def load_image(source: Any, allowed_local_dir: Path | None = None) -> Any:
    """A PIL image from a PIL image, raw bytes, a `data:image/...;base64,` URL, or (when
    `allowed_local_dir` is set, as vLLM's --allowed-local-media-path) a file:// URL or path
    inside that folder. Remote http(s) URLs are refused: this engine never fetches."""
    from PIL import Image

    if isinstance(source, Image.Image):
        return _checked(source)
    if isinstance(source, bytes | bytearray):
        return _decode(bytes(source))
    if not isinstance(source, str):
        raise ImageError(f"an image must be a URL, a path or bytes, not {type(source).__name__}")
    if source.startswith("data:"):
        header, sep, payload = source.partition(",")
        if not sep or ";base64" not in header or not header[5:].startswith("image/"):
            raise ImageError("an image data URL must look like data:image/<format>;base64,<data>")
        if len(payload) > MAX_IMAGE_BYTES * 4 // 3 + 4:
            raise ImageError(f"the image is larger than {MAX_IMAGE_BYTES >> 20} MiB")
        try:
            return _decode(base64.b64decode(payload, validate=True))
        except binascii.Error:
            raise ImageError("the image data URL is not valid base64") from None
    if source.startswith(("http://", "https://")):
        raise ImageError("fetching images over the network is not supported; send a data URL")
    if allowed_local_dir is None:
        raise ImageError("local image paths are refused (the server allows no local media path)")
    path = Path(source.removeprefix("file://")).resolve()
    root = allowed_local_dir.resolve()
    if not path.is_relative_to(root):
        raise ImageError(f"the image path is outside the allowed folder {root}")
    if not path.is_file():
        raise ImageError(f"no image file at {path}")
    if path.stat().st_size > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is larger than {MAX_IMAGE_BYTES >> 20} MiB")
    return _decode(path.read_bytes())


def _decode(data: bytes) -> Any:
    from PIL import Image

    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"the image is larger than {MAX_IMAGE_BYTES >> 20} MiB")
    try:
        image = Image.open(io.BytesIO(data))  # reads the header only
        _checked(image)
        image.load()  # decompresses: corrupt data fails here
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.UnidentifiedImageError):
        raise ImageError("the data is not an image this server can read (or is too large)") from None
    except (OSError, ValueError, SyntaxError) as exc:  # truncated or corrupt pixel data
        raise ImageError(f"the image is corrupt: {exc}") from None
    return image


def _checked(image: Any) -> Any:
    width, height = image.size
    if width < 1 or height < 1:
        raise ImageError("the image is empty")
    if width * height > MAX_IMAGE_PIXELS:
        raise ImageError(
            f"the image has {width}x{height} pixels, more than {MAX_IMAGE_PIXELS} accepted"
        )
    return image


def to_rgb(image: Any) -> Any:
    """RGB, transparency composited onto white (as transformers and vLLM do)."""
    from PIL import Image

    if "A" in image.getbands() or image.info.get("transparency") is not None:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


class ImageProcessor:
    """Owned by the MultiModalManager (and the server, which processes off the engine)."""

    def __init__(self, config: ImageProcessorConfig) -> None:
        self.config = config

    def __call__(self, source: Any, allowed_local_dir: Path | None = None) -> ProcessedImage:
        from PIL import Image

        cfg = self.config
        image = to_rgb(load_image(source, allowed_local_dir))
        factor = cfg.patch_size * cfg.merge_size
        h, w = smart_resize(image.height, image.width, factor, cfg.min_pixels, cfg.max_pixels)
        image = image.resize((w, h), resample=Image.Resampling.BICUBIC)
        pixels = np.asarray(image, dtype=np.uint8).transpose(2, 0, 1)  # [C, H, W]
        # As transformers: rescale in float64, then normalise in float32.
        x = (pixels.astype(np.float64) * (1 / 255)).astype(np.float32)
        mean = np.asarray(cfg.image_mean, dtype=np.float32)[:, None, None]
        std = np.asarray(cfg.image_std, dtype=np.float32)[:, None, None]
        x = (x - mean) / std
        patches, gh, gw = patchify(x, cfg.patch_size, cfg.merge_size, cfg.temporal_patch_size)
        pixel_values = torch.from_numpy(np.ascontiguousarray(patches))
        digest = hashlib.blake2b(pixel_values.numpy().tobytes(), digest_size=16)
        digest.update(f"{gh}x{gw}".encode())
        return ProcessedImage(pixel_values, (1, gh, gw), digest.hexdigest(), cfg.merge_size)


def patchify(
    image: np.ndarray, patch: int, merge: int, temporal: int
) -> tuple[np.ndarray, int, int]:
    """[C, H, W] -> ([gh * gw, C * temporal * patch * patch], gh, gw), merge squares together."""
    c, height, width = image.shape
    gh, gw = height // patch, width // patch
    x = image.reshape(c, gh // merge, merge, patch, gw // merge, merge, patch)
    x = x.transpose(1, 4, 2, 5, 0, 3, 6)  # (square row, square col, row, col, C, py, px)
    x = np.broadcast_to(x[:, :, :, :, :, None], (*x.shape[:5], temporal, *x.shape[5:]))
    return x.reshape(gh * gw, c * temporal * patch * patch), gh, gw
