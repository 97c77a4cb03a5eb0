"""Reading a source file: bytes -> text, honouring BOMs and PEP 263 coding cookies."""

from __future__ import annotations

import hashlib
import io
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """A file that cannot be turned into text or parsed; the message is the reason shown."""


@dataclass(slots=True)
class SourceText:
    text: str  # newlines normalised to "\n" so ast and libcst count lines alike
    sha256: str


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode_source(data: bytes) -> str:
    """Decode like the interpreter does: BOM first, then a coding cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # bad UTF-8 in the first lines, unknown codec, BOM/cookie conflict
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as decode_exc:
            raise SourceError(f"UnicodeDecodeError: {decode_exc}") from None
        raise SourceError(f"EncodingError: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"{type(exc).__name__}: {exc}") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_source(data: bytes) -> SourceText:
    return SourceText(text=decode_source(data), sha256=sha256_of(data))
