"""A request's structured-output fields -> StructuredOutputsParams, or a 400 naming the field.

    response_format: {"type": "text"}                      no constraint (OpenAI)
                     {"type": "json_object"}               any JSON object (OpenAI)
                     {"type": "json_schema", "json_schema": {"name": ..., "schema": {...},
                                                            "strict": true}}  (OpenAI)
    structured_outputs: {"json" | "regex" | "choice" | "grammar" | "json_object": ...}  (vLLM)
    guided_json / guided_regex / guided_choice / guided_grammar   (vLLM's older names)

At most one of them may constrain a request. The constraint is enforced whatever
`strict` says (as vLLM does). Whether a schema or grammar compiles is the engine's
call (xgrammar); a failure there is a 400 too (see Serving.submit).
"""

from __future__ import annotations

from typing import Any

from reference_engine.server.errors import APIError
from reference_engine.server.protocol import _SamplingFields
from reference_engine.structured_output import StructuredOutputsParams

_VLLM_KEYS = ("json", "regex", "choice", "grammar", "json_object")


def _from_response_format(fmt: dict[str, Any]) -> StructuredOutputsParams | None:
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return StructuredOutputsParams(json_object=True)
    if kind == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise APIError(
                "response_format json_schema needs json_schema.schema, a JSON Schema object",
                param="response_format",
            )
        return StructuredOutputsParams(json=spec["schema"])
    raise APIError(
        f"response_format type must be text, json_object or json_schema, got {kind!r}",
        param="response_format",
    )


def structured_outputs_from_request(req: _SamplingFields) -> StructuredOutputsParams | None:
    found: list[tuple[str, StructuredOutputsParams | None]] = []
    current = "response_format"  # the field being read, for the error's param
    try:
        if req.response_format is not None:
            found.append(("response_format", _from_response_format(req.response_format)))
        current = "structured_outputs"
        if req.structured_outputs is not None:
            unknown = sorted(set(req.structured_outputs) - set(_VLLM_KEYS))
            if unknown:
                raise APIError(
                    f"unknown structured_outputs keys {unknown}; known: {list(_VLLM_KEYS)}",
                    param="structured_outputs",
                )
            found.append(("structured_outputs", StructuredOutputsParams(**req.structured_outputs)))
        for name, kind in (("guided_json", "json"), ("guided_regex", "regex"),
                           ("guided_choice", "choice"), ("guided_grammar", "grammar")):  # fmt: skip
            value = getattr(req, name)
            current = name
            if value is not None:
                found.append((name, StructuredOutputsParams(**{kind: value})))
    except (ValueError, TypeError) as exc:
        raise APIError(str(exc), param=current) from None
    constraints = [(name, c) for name, c in found if c is not None]
    if len(constraints) > 1:
        raise APIError(
            f"at most one structured-output constraint per request, got "
            f"{', '.join(name for name, _ in constraints)}",
            param=constraints[1][0],
        )
    return constraints[0][1] if constraints else None
