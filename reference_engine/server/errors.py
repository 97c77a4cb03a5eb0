"""OpenAI-style error objects: {"error": {"message", "type", "param", "code"}}."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

from pydantic import ValidationError

# HTTP status -> the OpenAI `type` string clients match on.
_ERROR_TYPES = {
    400: "invalid_request_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    401: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


@dataclass(slots=True)
class APIError(Exception):
    """Raised anywhere in request handling; the app turns it into a JSON error response."""

    message: str
    _: KW_ONLY  # status, param and code by name: a stray positional would be a silent bug
    status: int = 400
    param: str | None = None
    code: str | None = None
    retry_after: int | None = None  # seconds, sent as Retry-After (429 / 503)

    def __str__(self) -> str:
        return self.message

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.status, self.param, self.code)

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None


def error_body(
    message: str, status: int, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def from_validation_error(exc: ValidationError) -> APIError:
    """The first problem pydantic found, phrased for a person; `param` names the field."""
    errors = exc.errors(include_url=False)
    if not errors:
        return APIError("invalid request body")
    first = errors[0]
    kind = first["type"]
    if kind == "json_invalid":
        return APIError(f"the body is not valid JSON: {first['msg']}", code="invalid_json")
    if kind == "model_type" and not first["loc"]:
        return APIError("the body must be a JSON object", code="invalid_json")
    # Union members add their type name to the location ("prompt", "str"); keep field names.
    loc = [str(p) for p in first["loc"] if isinstance(p, int) or not _is_type_name(str(p))]
    param = ".".join(loc) or None
    if kind == "extra_forbidden":
        return APIError(f"Unrecognized request argument supplied: {param}", param=param)
    if kind == "missing":
        return APIError(f"missing required parameter: {param}", param=param)
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return APIError(f"{param}: {first['msg']}{more}", param=param, code="invalid_value")


def _is_type_name(part: str) -> bool:
    # pydantic names union branches after their types: "str", "list[int]", "TextPart", ...
    return (
        part in {"str", "int", "float", "bool", "none", "dict", "list"}
        or "[" in part
        or (part[:1].isupper() and part.isidentifier())
        or part.startswith(("constrained-", "function-"))
    )
