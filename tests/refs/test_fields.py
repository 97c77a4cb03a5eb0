"""Request fields and keywords (`fields.py`): `extra_body` keys, the same words in the prose,
keywords of the project's classes (followed through `**kwargs` handed on to another class),
judged against a small pin whose sources are real Python on disk (signatures are read from them).
The document forms are those of vLLM's structured-outputs page (early 2025) and of third-party
notes that copy `LLM.__init__`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analyzer.refs.build import source_literals
from analyzer.refs.check import check_references, check_upgrade, extract_all
from analyzer.refs.fields import accepts, request_fields, route_classes
from analyzer.refs.pinview import PinView, SymbolEntry
from analyzer.refs.routes import module_routes
from analyzer.refs.suggest import History

_PROTOCOL = '''
class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")


class ChatCompletionRequest(OpenAIBaseModel):
    messages: list
    model: str | None = None
    stop: str | list[str] | None = []
    structured_outputs: dict | None = None
'''
_SAMPLING = '''
class SamplingParams(msgspec.Struct):
    n: int = 1
    temperature: float = 1.0
    structured_outputs: dict | None = None
'''
_ARGS = '''
@dataclass
class EngineArgs:
    model: str = "facebook/opt-125m"
    tokenizer: str | None = None
    max_model_len: int | None = None
'''
_LLM = '''
class LLM:
    def __init__(self, model: str, *, tokenizer: str | None = None, **kwargs) -> None:
        engine_args = EngineArgs(model=model, tokenizer=tokenizer, **kwargs)
        self.engine = engine_args

    def generate(self, prompts, sampling_params=None, *, use_tqdm: bool = True):
        return self._run_engine(use_tqdm=use_tqdm)

    def chat(self, messages, sampling_params=None, *, chat_template=None):
        return []

    def _run_engine(self, *, use_tqdm: bool = True):
        return []


def load_plugin(**kwargs):
    return kwargs.get("name")
'''


# The server's routes: a handler taking a request model, and one reading the raw body.
_ROUTER = '''
from fastapi import APIRouter, Request

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

router = APIRouter()


@router.post("/v1/chat/completions", dependencies=[])
async def create_chat_completion(request: ChatCompletionRequest, raw_request: Request):
    return None


@router.post("/collective_rpc")
async def collective_rpc(raw_request: Request):
    return await raw_request.json()
'''


_WORKER = '''
class WorkerWrapper:
    config = None

    def __init__(self, rpc_rank=0):
        self.rank = rpc_rank
'''


# A route whose handler builds its model from the raw body, the model beside it (not in a protocol module).
_SCORING = '''
from fastapi import Request
from pydantic import BaseModel


class GenerativeScoringRequest(BaseModel):
    label_token_ids: list[int]


@router.post("/generative_scoring")
async def create_generative_scoring(raw_request: Request):
    return GenerativeScoringRequest(**(await raw_request.json()))
'''


def _view(root: Path, version: str, guided: bool) -> PinView:
    """A vLLM pin: `guided` adds the old `guided_json` request field."""
    protocol = _PROTOCOL + ("    guided_json: dict | None = None\n" if guided else "")
    sources = {
        "vllm/entrypoints/openai/chat_completion/protocol.py": protocol,
        "vllm/sampling_params.py": _SAMPLING,
        "vllm/engine/arg_utils.py": _ARGS,
        "vllm/entrypoints/llm.py": _LLM,
        "vllm/worker/worker_base.py": _WORKER,
        "vllm/entrypoints/openai/api_router.py": _ROUTER,
        "vllm/entrypoints/generate/scoring.py": _SCORING,
    }
    tree = root / f"vllm-{version}"
    symbols = [SymbolEntry("vllm.LLM", "vllm/__init__.py", 1, 1, "import"), SymbolEntry("vllm.SamplingParams", "vllm/__init__.py", 2, 2, "import")]
    for rel, text in sources.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text, encoding="utf-8")
        module = rel.removesuffix(".py").replace("/", ".")
        symbols.append(SymbolEntry(module, rel, 1, len(text.splitlines()), "module"))
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                symbols.append(SymbolEntry(f"{module}.{node.name}", rel, node.lineno, node.end_lineno or node.lineno, "function"))
            if not isinstance(node, ast.ClassDef):
                continue
            cls = f"{module}.{node.name}"
            bases = tuple(ast.unparse(b) for b in node.bases)
            symbols.append(SymbolEntry(cls, rel, node.lineno, node.end_lineno or node.lineno, "class", bases))
            for item in node.body:
                if isinstance(item, ast.AnnAssign | ast.Assign):
                    target = item.target if isinstance(item, ast.AnnAssign) else item.targets[0]
                    if isinstance(target, ast.Name):
                        symbols.append(SymbolEntry(f"{cls}.{target.id}", rel, item.lineno, item.lineno, "attribute"))
                elif isinstance(item, ast.FunctionDef):
                    symbols.append(SymbolEntry(f"{cls}.{item.name}", rel, item.lineno, item.end_lineno or item.lineno, "function"))
    return PinView(
        pin=f"vllm@{version}", project="vllm", kind="release", layout_prefix="", packages=("vllm",),
        files=frozenset([*sources, "vllm/__init__.py"]), symbols=symbols, flags=[], envs=[], tree=str(tree),
        routes=source_literals(tree, ("vllm",)).routes,  # as the loader reads them at build time
    )


@pytest.fixture
def pin(tmp_path: Path) -> PinView:
    return _view(tmp_path, "0.30.0", guided=False)


_DOC = '''# Structured Outputs in vLLM

The following parameters are supported, which must be added as extra parameters:

- `guided_json`: the output will follow the JSON schema.
- `structured_outputs`: the constraint, as an object.

```python
completion = client.chat.completions.create(
    model="Qwen/Qwen2.5-3B-Instruct",
    messages=[{"role": "user", "content": "Classify this sentiment: vLLM is wonderful!"}],
    extra_body={"guided_json": json_schema, "stop": ["\\n"]},
)
completion = client.beta.chat.completions.parse(
    model="m",
    messages=[],
    extra_body=dict(structured_outputs={"choice": ["Positive", "Negative"]}),
)
```

Offline:

```python
from vllm import LLM, SamplingParams
from vllm.entrypoints.llm import load_plugin

llm = LLM(model="HuggingFaceTB/SmolLM2-1.7B-Instruct", max_model_len=4096, swap_space=4)
sampling_params = SamplingParams(guided_decoding=guided_decoding_params, temperature=0.0)
load_plugin(anything=1)
```
'''


def _statuses(doc: str, pin: PinView) -> dict[tuple[int, str], str]:
    return {(f.ref.line, f.ref.text): f.status for f in check_references(extract_all([("doc.md", doc)]), [pin])}


def test_extra_body_keys_and_the_same_words_in_prose_are_request_fields(pin: PinView) -> None:
    got = _statuses(_DOC, pin)
    assert got[(5, "guided_json")] == "broken"  # the prose names what the snippet sends
    assert got[(12, "guided_json")] == "broken"  # `extra_body={"guided_json": ...}`
    assert got[(12, "stop")] == "ok"
    assert got[(6, "structured_outputs")] == "ok"
    assert got[(17, "structured_outputs")] == "ok"  # `extra_body=dict(structured_outputs=...)`
    assert not any(text in {"choice", "role", "content"} for _, text in got)  # nested keys, the client's own
    assert not any(text in {"model", "messages"} for line, text in got if line < 20)  # the OpenAI client's keywords


# vLLM's tokens-in/tokens-out page (2026) sends its body with `httpx.post(..., json=...)`;
# SGLang's native-API notebooks bind it first (`data = {...}` then `requests.post(url, json=data)`).
_HTTP_DOC = """# Tokens in vLLM

The request field `guided_json` selects the schema; `stop` cuts the text.

```python
import httpx, requests

response = httpx.post(
    "http://localhost:8000/v1/chat/completions",
    json={"guided_json": {}, "stop": ["x"], "messages": []},
).json()
data = {"structured_outputs": {}, "top_k_tokens": 3}
requests.post(url, json=data)
requests.get(url, json={"not_sent_by_post": 1})
```

- `guided_json: {...}` is rejected; `stop: ["x"]` is kept.
- Retry with `guided_json=false`.
"""


def test_the_json_body_of_an_http_call_holds_request_fields(pin: PinView) -> None:
    got = _statuses(_HTTP_DOC, pin)
    assert got[(3, "guided_json")] == "broken"  # the prose names what the body sends
    assert got[(10, "guided_json")] == "broken" and got[(10, "stop")] == "ok" and got[(10, "messages")] == "ok"
    assert got[(12, "structured_outputs")] == "ok" and got[(12, "top_k_tokens")] == "broken"  # bound, then sent
    assert not any(text == "not_sent_by_post" for _, text in got)  # a GET's `json=` is no body of ours to judge
    assert got[(17, "guided_json")] == "broken" and got[(17, "stop")] == "ok"  # `key: value` in code font
    assert got[(18, "guided_json=false")] == "broken"  # `key=value`


# SGLang's model pages send raw HTTP bodies with curl, where `extra_body` is no field (2026).
_CURL_DOC = """# Serving with vLLM

```bash
curl http://localhost:8000/v1/chat/completions \\
  -H "Content-Type: application/json" \\
  -d '{
    "messages": [{"role": "user", "content": "Hi"}],
    "extra_body": {"chat_template_kwargs": {"thinking": false}}
  }'
vllm serve m --override-generation-config '{"guided_json": 1}'
curl -X POST http://localhost:8000/collective_rpc -d '{"method": "reload_weights"}'
```
"""


def test_the_body_a_curl_command_sends_holds_request_fields(pin: PinView) -> None:
    got = _statuses(_CURL_DOC, pin)
    assert got[(7, "messages")] == "ok" and got[(8, "extra_body")] == "broken"
    assert not any(text in {"role", "content", "chat_template_kwargs", "thinking"} for _, text in got)  # inside the fields
    assert (10, "guided_json") not in got  # a flag's JSON is a config, not a request
    assert (11, "method") not in got  # a route whose handler reads the raw body: nothing to judge the key by


def test_routes_and_the_request_classes_their_handlers_take(pin: PinView) -> None:
    routes = route_classes(pin)
    assert routes["/v1/chat/completions"] == ("ChatCompletionRequest",)  # starlette's `Request` is not the project's
    assert routes["/collective_rpc"] == ()
    assert routes["/generative_scoring"] == ("GenerativeScoringRequest",)  # built from the raw body
    # the server's request classes include those its routes take, wherever they live
    assert request_fields(pin)["label_token_ids"] == "GenerativeScoringRequest"


def test_keywords_of_imported_classes_follow_kwargs_to_the_class_they_reach(pin: PinView) -> None:
    got = _statuses(_DOC, pin)
    assert got[(27, "model")] == "ok" and got[(27, "max_model_len")] == "ok"  # LLM(**kwargs) -> EngineArgs
    assert got[(27, "swap_space")] == "broken"
    assert got[(28, "guided_decoding")] == "broken" and got[(28, "temperature")] == "ok"  # msgspec fields
    assert (29, "anything") not in got  # `**kwargs` read by key: nothing says what it takes


def test_accepts_and_request_fields(pin: PinView) -> None:
    assert accepts("vllm.LLM", "tokenizer", pin) is True
    assert accepts("LLM", "max_model_len", pin) is True
    assert accepts("LLM", "swap_space", pin) is False
    assert accepts("load_plugin", "name", pin) is None
    assert accepts("NoSuchClass", "x", pin) is None
    # A class with its own `__init__` takes what that takes, not an attribute it holds.
    assert accepts("WorkerWrapper", "rpc_rank", pin) is True and accepts("WorkerWrapper", "config", pin) is False
    assert set(request_fields(pin)) >= {"messages", "stop", "structured_outputs", "model_config"}


def test_a_document_that_names_no_project_leaves_its_keys_alone(pin: PinView) -> None:
    doc = "# Notes\n\n```python\nclient.chat.completions.create(model='m', extra_body={'top_k': 5, 'my_option': 1})\n```\n"
    assert not any(status == "broken" for status in _statuses(doc, pin).values())


def test_upgrade_reports_a_field_the_new_pin_dropped(tmp_path: Path) -> None:
    old, new = _view(tmp_path, "0.29.0", guided=True), _view(tmp_path, "0.30.0", guided=False)
    refs = extract_all([("doc.md", _DOC)])
    found = {(f.ref.line, f.ref.text): f for f in check_upgrade(refs, old, new, History(old))}
    assert found[(12, "guided_json")].status == "broken" and found[(12, "guided_json")].previous_status == "ok"
    assert (12, "stop") not in found


# A third-party note's simplified copy of `LLM` (its comments are the note's own, in Chinese):
# `...` stands for the arguments left out, which does not parse as Python.
_COPY = """# vLLM 核心框架

```python
# vllm/entrypoints/llm.py (简化版)
class LLM:
    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,            # 可选的 tokenizer 路径
        swap_space: float = 4,                   # 交换空间 (GiB)
        **kwargs,
    ) -> None:
        engine_args = EngineArgs(
            model=model,
            tokenizer=tokenizer,
            ...
        )

    def generate(self, prompts, sampling_params=None, *, use_tqdm: bool = True):
        self._validate_and_add_requests(prompts=prompts, params=sampling_params)
        return self._run_engine(use_tqdm=use_tqdm)

    def chat(self, messages, sampling_params=None):
        prompts = self.preprocess_chat(messages=messages)
        return self.generate(prompts, sampling_params=sampling_params)
```
"""


def test_a_copied_class_parameters_and_self_calls_are_the_real_class_s(pin: PinView) -> None:
    got = _statuses(_COPY, pin)
    assert got[(8, "model")] == "ok" and got[(10, "tokenizer")] == "ok"
    assert got[(11, "swap_space")] == "broken"  # neither `LLM.__init__` nor the `EngineArgs` its **kwargs reach
    assert got[(15, "model")] == "ok" and got[(16, "tokenizer")] == "ok"  # parsed once `...` is left out
    assert got[(20, "prompts")] == "ok" and got[(20, "use_tqdm")] == "ok"
    assert got[(21, "self._validate_and_add_requests")] == "broken"
    assert got[(22, "self._run_engine")] == "ok"
    assert got[(25, "self.preprocess_chat")] == "broken"
    assert got[(26, "self.generate")] == "ok"


def test_a_toy_class_of_the_same_name_is_the_authors_own(pin: PinView) -> None:
    doc = (
        "# vLLM\n\n```python\nclass LLM:\n    def answer(self, question, depth=2):\n"
        "        return self.lookup(question)\n\n    def lookup(self, key):\n        return key\n```\n"
    )
    assert not any(status == "broken" for status in _statuses(doc, pin).values())


def test_a_list_of_request_fields_judges_its_other_items_as_fields(pin: PinView) -> None:
    doc = (
        "# Structured Outputs in vLLM\n\nThe following parameters are supported:\n\n"
        "- `guided_json`: the output will follow the JSON schema.\n"
        "- `structured_outputs`: the constraint, as an object.\n"
        "- `guided_whitespace_pattern`: used to override the default whitespace pattern.\n\n"
        "```python\nclient.chat.completions.create(model='m', messages=[], extra_body={'guided_json': s, 'structured_outputs': {}})\n```\n\n"
        "Other words: `my_variable` stays a word.\n"
    )
    got = _statuses(doc, pin)
    assert got[(7, "guided_whitespace_pattern")] == "broken"  # listed with two fields the snippet sends
    assert got[(6, "structured_outputs")] == "ok"
    assert got.get((13, "my_variable")) != "broken"  # not in the list: a word, as before


def test_the_route_a_request_call_goes_to() -> None:
    from analyzer.refs.document import request_endpoint, url_path, value_bindings

    tree = ast.parse(
        'url = f"http://localhost:{port}/generate"\n'
        "requests.post(url, json=data)\n"
        'requests.post(base + "/v1/embeddings/", json={})\n'
        "requests.post(f'{host}/v1/models/{name}', json={})\n"
        "client.chat.completions.create(model='m', extra_body={})\n"
    )
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    bindings = value_bindings(tree)
    assert [request_endpoint(c, bindings) for c in calls] == ["/generate", "/v1/embeddings", None, "/v1/chat/completions"]
    assert url_path("http://localhost:8000/v1/completions?x=1") == "/v1/completions" and url_path("localhost") is None


_BUILT = '''
from fastapi import Request
from fastapi.responses import JSONResponse
from vllm.protocol import ScoreResponse


@router.post("/generative_scoring")
async def create_generative_scoring(raw_request: Request):
    raw_body = await raw_request.json()
    from vllm.serving import GenerativeScoringRequest
    gen_request = GenerativeScoringRequest(**raw_body)
    return ScoreResponse(**gen_request.model_dump())


@router.post("/add_corpus")
async def add_corpus(request: Request):
    obj = AddCorpusReqInput.model_validate(await request.json())
    return JSONResponse(**{"content": obj})


@router.post("/edits")
async def edits(request: Request):
    return ImageResponse(**await build(request))


@router.post("/collective_rpc")
async def collective_rpc(raw_request: Request):
    body = await raw_request.json()
    return body["method"]
'''


def test_a_route_takes_the_class_its_handler_builds_from_the_json_body() -> None:
    # `GenerativeScoringRequest(**raw_body)` where the parameter is starlette's `Request`; a
    # response built from anything else, or a body read by key, names no model of the route's.
    assert module_routes(_BUILT, ["vllm"]) == {
        "/generative_scoring": ("GenerativeScoringRequest",),
        "/add_corpus": ("AddCorpusReqInput",),
        "/edits": (),
        "/collective_rpc": (),
    }
