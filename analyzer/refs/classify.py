"""Decide what a piece of code text cites: a path, a symbol, a flag, an env var, or nothing.

Only the text itself is looked at here; the surrounding prose is `framework.py`'s job.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, replace

from analyzer.refs.models import ENV, FLAG, METRIC, PATH, SYMBOL

# Import roots of the two projects, and the repository layout prefix of each.
PACKAGE_ROOTS = {"vllm": "vllm", "sglang": "sglang"}
REPO_PREFIXES = {"vllm": "", "sglang": "python/"}
ENV_PREFIXES = {"VLLM_": "vllm", "SGLANG_": "sglang", "SGL_": "sglang"}
# Top-level folders of the upstream repositories that no wheel contains.
REPO_ONLY_DIRS = {
    "vllm": ("csrc", "docs", "tests", "benchmarks", "examples", "cmake", "docker", ".github", "tools", "requirements"),
    "sglang": ("sgl-kernel", "sgl-router", "sgl-model-gateway", "docs", "test", "benchmark", "examples", "docker", "3rdparty", "scripts", ".github"),
}
FILE_EXTENSIONS = (".py", ".pyi", ".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".rs", ".md", ".toml", ".yaml", ".yml", ".json", ".txt", ".sh", ".jinja", ".proto")

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED_RE = re.compile(rf"^{_IDENT}(?:\.{_IDENT})*$")
_CALL_RE = re.compile(rf"^(?P<name>{_IDENT}(?:\.{_IDENT})*)\((?P<args>[^()]*)\)$")
_FLAG_RE = re.compile(r"^(?P<flag>--[A-Za-z0-9][A-Za-z0-9_.-]*)(?:[= ].*)?$")
_ENV_RE = re.compile(r"^\$?\{?(?P<name>[A-Z][A-Z0-9_]*[A-Z0-9])\}?(?:=.*)?$")
_PATH_RE = re.compile(r"^(?P<path>[A-Za-z0-9_.][A-Za-z0-9_.\-/]*)(?::{1,2}(?P<suffix>\d+(?:-\d+)?|" + _IDENT + r"(?:\." + _IDENT + r")*))?$")
_CAMEL_RE = re.compile(r"^_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")

# Names that look like classes but are never the projects' own (standard library,
# PyTorch, common prose words written in code font).
FOREIGN_NAMES = frozenset(
    {
        "PyTorch", "Tensor", "Module", "Parameter", "ThreadPoolExecutor", "IntEnum", "ABC", "Protocol", "TypedDict",
        "NamedTuple", "Optional", "Union", "Any", "List", "Dict", "Tuple", "Callable",
        "Iterable", "Iterator", "True", "False", "None", "Exception", "ValueError",
        "Queue", "Thread", "Process", "Path", "Enum",
        "RuntimeError", "KeyError", "TypeError", "NotImplementedError", "AssertionError",
        "StopIteration", "FastAPI", "BaseModel", "StreamingResponse", "JSONResponse", "OpenAI", "AsyncOpenAI", "AutoTokenizer",
        "AutoModelForCausalLM", "AutoConfig", "PreTrainedTokenizer", "Qwen", "FlashAttention",
        "FlashInfer", "DeepEP", "DeepGEMM", "Mooncake", "Triton", "CuPy", "NumPy", "Python",
        # Standard library and dependencies a serving text names next to the projects' own.
        "ProfilerActivity", "DataLoader", "OrderedDict", "Literal", "Annotated", "Generic", "TypeVar", "Awaitable", "AsyncIterator", "AsyncGenerator",
        "NewType", "ParamSpec", "TypeVarTuple", "ClassVar", "Final", "Concatenate", "TypeGuard", "Unpack", "Required", "NotRequired",
        "Generator", "Future", "Event", "Lock", "Condition", "Semaphore", "ProcessPoolExecutor",
        "PreTrainedModel", "PretrainedConfig", "GenerationConfig", "AutoProcessor", "AutoModel", "PreTrainedTokenizerFast",
        "PreTrainedTokenizerBase", "ProcessorMixin", "BatchFeature",
        "APIRouter", "HTTPException", "Depends", "ORJSONResponse", "ConfigDict", "RLock", "ZMQ", "PyNccl", "NCCL",
        "CUDAGraph", "CUDA", "ROCm", "PagedAttention", "FlashAttention2", "FlashAttention3",
        "HuggingFace", "TensorRT", "JSONDecodeError", "OSError", "TimeoutError", "ImportError",
        "AttributeError", "IndexError", "OverflowError", "MemoryError", "OutOfMemoryError",
        # Libraries, products and model families named in code font.
        "LMCache", "FlashMLA", "XGrammar", "LLGuidance", "Outlines", "TorchAO", "ModelOpt", "DeepSeek", "LLaMA", "Llama",
        "Mistral", "Mixtral", "Gemma", "DeepSpeed", "Megatron", "SGLang", "ShareGPT",
        "Anthropic", "Kubernetes", "Docker", "Prometheus", "Grafana", "NVLink", "InfiniBand", "RoCE", "Gaudi", "FlexAttention", "xFormers", "FlashDecoding", "SmoothQuant", "LoRA", "QLoRA", "GitHub",
        "OpenTelemetry", "ZeroMQ", "PyPI", "Conda", "TensorRT-LLM", "TensorBoard", "Perfetto", "Nsight",
        # C library and POSIX calls a text names beside the projects' own (`shm_open` before `shm_unlink`).
        "shm_open", "shm_unlink", "munmap", "ftruncate", "dlopen", "dlsym", "ioctl", "memcpy", "memset", "posix_memalign",
    }
) | frozenset(
    {
        # Kubernetes' own vocabulary in deployment pages (resource kinds, volume access modes, pod
        # states) and that of the operators they deploy with (LeaderWorkerSet, KEDA, Karpenter,
        # KubeRay, KServe, the Gateway API's inference extension). Compound words only: a plain
        # `Deployment` or `Service` may be a project's class.
        "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob", "PersistentVolumeClaim", "PersistentVolume", "StorageClass",
        "ConfigMap", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "NetworkPolicy",
        "HorizontalPodAutoscaler", "PodDisruptionBudget", "CustomResourceDefinition", "PriorityClass", "ResourceQuota",
        "ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany", "ReadWriteOncePod", "ImagePullBackOff", "CrashLoopBackOff",
        "ErrImagePull", "OOMKilled", "ContainerCreating", "NodePort", "ClusterIP", "LeaderWorkerSet", "ScaledObject",
        "TriggerAuthentication", "NodePool", "NodeClaim", "EC2NodeClass", "RayCluster", "RayService", "RayJob",
        "InferenceService", "ServingRuntime", "HTTPRoute", "InferencePool", "InferenceModel", "InferenceObjective",
        "ServiceMonitor", "PodMonitor",
    }
)
# Python builtins called in snippets (`len(x)`, `print(y)`): never a citation.
BUILTINS = frozenset(
    {
        "print", "len", "range", "min", "max", "sum", "sorted", "list", "dict", "set", "tuple",
        "int", "float", "str", "bool", "isinstance", "getattr", "setattr", "hasattr", "super",
        "enumerate", "zip", "map", "filter", "open", "iter", "next", "abs", "any", "all", "type",
        "repr", "round", "format", "input", "id", "hash", "vars", "object", "property", "staticmethod",
        "classmethod", "reversed", "divmod", "pow", "ord", "chr", "bytes", "bytearray", "memoryview",
        "frozenset", "slice", "callable", "exec", "eval", "compile", "globals", "locals", "dir",
    }
)
# The standard library's lower-case containers and decorators, called like builtins
# (`deque(maxlen=4)`, `partial(f, x)`); not `cache` or `reduce`, words a text uses for its own
# objects, nor capitalised ones (`Counter`), names the projects reuse for classes of their own.
_STDLIB_CALLABLES = frozenset(
    {"deque", "defaultdict", "namedtuple", "partial", "partialmethod", "lru_cache", "cached_property", "wraps", "total_ordering", "singledispatch"}
)
# The standard library's own exceptions a serving loop catches or raises (`asyncio.CancelledError`
# written bare, `subprocess.CalledProcessError`): distinctive names no pin defines.
_STDLIB_EXCEPTIONS = frozenset(
    {
        "CancelledError", "InvalidStateError", "QueueEmpty", "QueueFull", "IncompleteReadError", "LimitOverrunError",
        "BrokenExecutor", "BrokenProcessPool", "BrokenBarrierError", "CalledProcessError", "SubprocessError",
        "TimeoutExpired", "JSONDecodeError", "PickleError", "PicklingError", "UnpicklingError", "SSLError",
        "HTTPError", "URLError", "HTTPException", "RemoteDisconnected", "AuthenticationError", "BadZipFile",
    }
)
# Every name Python itself defines (`EOFError`, `ModuleNotFoundError`, `len`), read from this
# interpreter's `builtins` module, and those above: never the projects' own.
PYTHON_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_")) | _STDLIB_CALLABLES | _STDLIB_EXCEPTIONS
# Attributes every module has (`sglang.__file__`): a citation of the module alone.
_MODULE_DUNDERS = frozenset({"__file__", "__path__", "__name__", "__doc__", "__version__", "__spec__", "__package__", "__all__"})
# Env vars and words in capitals that belong to other programs or to prose.
FOREIGN_ENV_PREFIXES = ("CUDA_", "HF_", "NCCL_", "OMP_", "PYTORCH_", "TORCH_", "HIP_", "ROCM_", "LD_", "NVIDIA_", "TRANSFORMERS_", "HUGGING", "MKL_", "KMP_", "GLOO_", "RAY_", "UCX_", "NVSHMEM_", "TOKENIZERS_")
CAPS_WORDS = frozenset(
    {"NULL", "TRUE", "FALSE", "NONE", "JSON", "HTTP", "HTTPS", "GPU", "GPUS", "CPU", "CPUS", "TPU", "NPU", "API", "URL", "EOS", "BOS",
     "TTFT", "TPOT", "ITL", "OOM", "RPC", "SSE", "MLA", "MOE", "TODO", "FIXME", "NOTE", "GET", "POST", "PUT", "DELETE", "PATH", "HOME",
     "USER", "SHELL", "LORA", "FP8", "FP16", "BF16", "INT8", "INT4", "AWQ", "GPTQ", "KV", "DP", "TP", "PP", "EP", "SP", "CP", "RDMA"}
)
# Files at a repository's root that no wheel contains.
REPO_ROOT_FILES = frozenset({"setup.py", "CMakeLists.txt", "pyproject.toml", "setup.cfg", "MANIFEST.in", "Dockerfile", "Makefile", "requirements.txt", "use_existing_torch.py"})
# `Dockerfile.rocm`, `cpu.Dockerfile`: a platform's image recipe, a file of the repository, never a dotted name.
DOCKERFILE_RE = re.compile(r"(?:Dockerfile|Containerfile)(?:\.[\w-]+)*|[\w-]+\.(?:Dockerfile|dockerfile)")
# Source files a bare name may cite (`scheduler.py`); documents and data (`README.md`,
# `generation_config.json`) are not the projects' code.
CODE_FILE_EXTENSIONS = (".py", ".pyi", ".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp", ".rs", ".proto")
# `torch.cat`, `np.zeros`: lower-case dotted names rooted here are ordinary code.
FOREIGN_ROOTS = frozenset(
    {
        "torch", "np", "numpy", "os", "sys", "math", "time", "asyncio", "json", "re", "self", "cls", "nn", "F",
        "triton", "tl", "transformers", "collections", "itertools", "functools", "random", "heapq", "typing",
        "dataclasses", "importlib", "setuptools", "pytest", "requests", "httpx", "aiohttp", "fastapi", "uvicorn",
        "pydantic", "zmq", "ray", "cuda", "nvtx", "flashinfer", "flash_attn", "xgrammar", "outlines", "openai",
        "client", "subprocess", "threading", "multiprocessing", "logging", "pathlib", "contextlib", "inspect",
        "pickle", "socket", "signal", "queue", "uuid", "base64", "hashlib", "struct", "weakref", "abc", "enum",
        "copy", "gc", "io", "shutil", "tempfile", "argparse", "datetime", "traceback", "warnings", "safetensors",
        "huggingface_hub", "tokenizers", "accelerate", "peft", "deepspeed", "megatron", "tqdm", "psutil", "pynvml",
    }
)


# Other systems a text about vLLM or SGLang compares with: a name in their sentence may be theirs.
OTHER_SYSTEMS_RE = re.compile(
    r"(?<![\w-])(nano-?vllm|mini-?sglang|vllm[-_]omni|sglang[-_]omni|sglang[-_]jax|sgl[-_]jax|TensorRT(?:-LLM)?|TRT-LLM|LightLLM|lmdeploy|DeepSpeed(?:-MII)?|FasterTransformer|"
    r"llama\.cpp|Ollama|TGI|text-generation-inference|transformers|Hugging ?Face|PyTorch|torch|FlashInfer|"
    r"flash[-_]attn|FlashAttention\d?|xformers|LMCache|Mooncake|NIXL|DeepEP|DeepGEMM|NCCL|Nsight|nsys|pytest|Ray|Dynamo|"
    r"MLC-?LLM|ExLlama|Megatron|Orca|FastAPI|uvicorn|Kubernetes|Prometheus|Docker|Linux|syscalls?|"
    r"llm-?compressor|ModelOpt|Model ?Optimizer|Quark|tensorizer|TRL|peft|Codex|LiteLLM|Haystack|LangChain|LlamaIndex|"
    r"KServe|KubeRay|Helm|AIBrix|llm-d|Kthena|BentoML|SkyPilot|GuideLLM|lm-eval(?:uation-harness)?|lm_eval|OpenAI|Anthropic|"
    r"Gradio|Streamlit|Jupyter|Weights ?& ?Biases|wandb|MLflow|OpenTelemetry|Grafana|Triton Inference Server|aiter|cutlass|UCX)(?![\w-])",
    re.IGNORECASE,
)


PROJECT_RE = re.compile(r"(?<![A-Za-z0-9_-])(vllm|sglang)(?![A-Za-z0-9_-])", re.IGNORECASE)  # ASCII: "vLLM的" names vLLM
# "recommended flags for vLLM", "schemes for vLLM": what another program's run or output is for,
# not the project taking the name.
FOR_PROJECT_RE = re.compile(r"\b(?:for|when (?:profiling|running|debugging))\s+(?:vllm|sglang)\b(?!\s+(?:serve|bench)\b)", re.IGNORECASE)


def other_system(text: str) -> str | None:
    """Another program `text` names, when it names neither vLLM nor SGLang."""
    m = OTHER_SYSTEMS_RE.search(text)
    return m.group(1) if m and not PROJECT_RE.search(text) else None


@dataclass(frozen=True, slots=True)
class Classified:
    kind: str
    target: str  # normalised text to resolve
    framework: str | None  # decided by the text alone, else None
    reason: str
    line_range: tuple[int, int] | None = None
    repo_layout: bool = False
    tentative: bool = False
    symbol: str | None = None  # `path.py:Class.method` / `path.py::Class`: what the file should define
    bare_file: bool = False  # `scheduler.py`: a file name without folders
    docs_page: bool = False  # a relative link to a page of the docs: looked up under `docs/` (links.py)
    anchor_names: tuple[str, ...] = ()  # names a `#L` link's sentence gives its lines (links.py)


def env_framework(name: str) -> str | None:
    for prefix, framework in ENV_PREFIXES.items():
        if name.startswith(prefix):
            return framework
    return None


def path_framework(path: str) -> tuple[str | None, bool]:
    """(framework, written in repository layout) judged from a path's first segments."""
    for framework, root in PACKAGE_ROOTS.items():
        prefix = REPO_PREFIXES[framework]
        if prefix and path.startswith(prefix + root + "/"):
            return framework, True
        if path == root or path.startswith(root + "/"):
            return framework, False
    return None, False


def classify_flag(text: str) -> Classified | None:
    m = _FLAG_RE.match(text)
    if m is None:
        return None
    return Classified(FLAG, m.group("flag"), None, "")


# `$VLLM_CACHE_ROOT/modules/...`: a path under a folder the variable names.
_ENV_LEADS_PATH_RE = re.compile(r"^\$\{?(?P<name>[A-Z][A-Z0-9_]*[A-Z0-9])\}?/\S*$")


def classify_env(text: str) -> Classified | None:
    m = _ENV_RE.match(text) or _ENV_LEADS_PATH_RE.match(text)
    if m is None:
        return None
    framework = env_framework(m.group("name"))
    if framework is None:  # `CUDA_VISIBLE_DEVICES`, `HF_TOKEN`: not the projects' own settings
        return None
    return Classified(ENV, m.group("name"), framework, "env var prefix")


_ANCHOR_RE = re.compile(r"^(?P<path>[^#\s]+)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


# Where a checkout's or an install's path reaches a project's package (`.../sglang/python/sglang/srt/x.py`).
_PACKAGE_ROOT_RE = re.compile(r"(?:^|/)(?P<path>(?:python/sglang|sglang|vllm)/(?!(?:vllm|sglang|python)/))")


def from_package_root(path: str) -> str | None:
    """The part of a machine's path from a project's package folder on
    (`/Users/me/code/vllm/vllm/v1/x.py` -> `vllm/v1/x.py`); None where it reaches none."""
    m = _PACKAGE_ROOT_RE.search(path)
    return path[m.start("path") :] if m else None


def classify_path(text: str) -> Classified | None:
    anchor = _ANCHOR_RE.match(text)
    if anchor is not None and "/" in anchor.group("path"):
        # `vllm/v1/core/sched/scheduler.py#L120-L180`: a GitHub-style anchor in code font.
        found = classify_path(anchor.group("path"))
        if found is None or found.kind != PATH:
            return None
        first_line = int(anchor.group("start"))
        last_line = int(anchor.group("end") or first_line)
        return Classified(PATH, found.target, found.framework, found.reason, (first_line, last_line), found.repo_layout)
    if text.startswith(("/", "~/")):
        tail = checkout_tail(text)
        if tail is None:
            return None  # `/v1/completions`, `/path/to/model`: an endpoint or a machine's path
        text = tail
    m = _PATH_RE.match(text)
    if m is None or "//" in text:
        return None
    path = m.group("path")
    if "/" not in path:
        return _bare_file(path, m.group("suffix"))
    if path.startswith("./"):
        path = path[2:]
    path = path.rstrip("/") or path
    last = path.rsplit("/", 1)[-1]
    looks_like_file = last.endswith(FILE_EXTENSIONS)
    framework, repo_layout = path_framework(path)
    first = path.split("/", 1)[0]
    repo_dir = any(first in dirs for dirs in REPO_ONLY_DIRS.values())
    if framework is None and not (looks_like_file or text.endswith("/") or repo_dir):
        return None  # `a/b` in prose: a ratio or an alternative, not a path
    line_range = None
    suffix = m.group("suffix")
    if suffix and suffix[0].isdigit():
        start, _, end = suffix.partition("-")
        line_range = (int(start), int(end or start))
    reason = "path prefix" if framework else ""
    symbol = suffix if suffix and not suffix[0].isdigit() else None
    return Classified(PATH, path, framework, reason, line_range, repo_layout, symbol=symbol)


_INSTALL_DIRS = ("site-packages", "dist-packages")


def checkout_tail(text: str) -> str | None:
    """The project part of an absolute path into a checkout or an install
    (`/data/u/gitrepos/vllm/vllm/core/scheduler.py` -> `vllm/core/scheduler.py`,
    `/home/u/sglang/python/sglang/srt/` -> `python/sglang/srt/`), or None when nothing in it
    shows where the project starts. A lone `vllm/` segment is not enough: it may be the
    checkout's root (`/src/vllm/benchmarks/x.py` is a repository file, not `vllm.benchmarks`)."""
    segments = text.split("/")
    for i in range(1, len(segments) - 1):
        seg = segments[i]
        if seg not in PACKAGE_ROOTS:
            continue
        before, after = segments[i - 1], segments[i + 1]
        if after == seg:  # the checkout folder, then the package
            return "/".join(segments[i + 1 :])
        prefix = REPO_PREFIXES[seg]
        if before.startswith((f"{seg}-", f"{seg}_")) and not prefix:  # `/home/u/vllm-learn/vllm/core/x.py`: a checkout named after it
            return "/".join(segments[i:])
        if prefix and "/".join(segments[i + 1 : i + 3]) == prefix + seg:  # the checkout, then python/sglang
            return "/".join(segments[i + 1 :])
        if prefix and before + "/" == prefix:  # `/python/sglang/...` written from the repository root
            return "/".join(segments[i - 1 :])
        if i == 1 or before in _INSTALL_DIRS:  # `/vllm/core/x.py`, `.../site-packages/vllm/...`
            return "/".join(segments[i:])
    return None


def _bare_file(name: str, suffix: str | None) -> Classified | None:
    """`schedule_batch.py`, `io_struct.py::GenerateReqInput`, `async_llm.py:903`: a source file
    named without its folders, found by name."""
    if not name.endswith(CODE_FILE_EXTENSIONS) or name.startswith(".") or name.count(".") != 1:
        return None
    line_range = None
    symbol = None
    if suffix and suffix[0].isdigit():
        start, _, end = suffix.partition("-")
        line_range = (int(start), int(end or start))
    elif suffix:
        symbol = suffix
    return Classified(PATH, name, None, "", line_range, symbol=symbol, bare_file=True)


# `vllm::paged_attention_v1_kernel`, `Router::new()`, `crate::policies::CacheAwarePolicy`:
# a C++ or Rust name written with its scopes (template arguments allowed, then dropped).
_SCOPED_RE = re.compile(rf"^(?:::)?{_IDENT}(?:<[^<>]*>)?(?:::~?{_IDENT}(?:<[^<>]*>)?)+(?:\([^()]*\))?$")
_TEMPLATE_ARGS_RE = re.compile(r"<[^<>]*>")
# Scopes of the languages' own libraries and of dependencies: never the projects' code.
FOREIGN_SCOPES = frozenset(
    {
        "std", "torch", "at", "c10", "cute", "cutlass", "cub", "thrust", "pybind11", "py", "nv", "cuda", "cudnn", "cublas",
        "flashinfer", "triton", "core", "alloc", "tokio", "serde", "serde_json", "axum", "hyper", "reqwest", "anyhow",
        "tracing", "futures", "tonic", "prost", "pyo3", "rayon", "dashmap", "boost", "absl", "fmt", "spdlog", "nlohmann",
    }
)
# Rust path roots that name the current crate rather than a module.
_RUST_SELF_SCOPES = ("crate", "self", "super", "Self")


def classify_scoped(text: str) -> Classified | None:
    """A C++/Rust scoped name; the target is dotted (`vllm.paged_attention_v1_kernel`)."""
    if "::" not in text or not _SCOPED_RE.match(text):
        return None
    name = _TEMPLATE_ARGS_RE.sub("", text.split("(", 1)[0]).strip(":")
    parts = [p for p in name.split("::") if p]
    while parts and parts[0] in _RUST_SELF_SCOPES:
        parts = parts[1:]
    if not parts or parts[0] in FOREIGN_SCOPES or len(parts) < 1:
        return None
    framework = PACKAGE_ROOTS.get(parts[0])
    return Classified(SYMBOL, ".".join(parts), framework, "scoped name" if framework else "")


_DATA_FILE_RE = re.compile(r"\.(?:txt|md|rst|json|jsonl|yaml|yml|toml|cfg|ini|lock|csv|png|jpg|svg|html|jinja|sh|log|whl|tar|gz|zip)$", re.IGNORECASE)


# `paged_attention_v1_kernel<T, 128>`, `launcher<...>(...)`: a C++ template named with its arguments.
_TEMPLATE_CALL_RE = re.compile(rf"^(?P<name>{_IDENT})<[^<>]*(?:<[^<>]*>[^<>]*)*>(?:\([^()]*\))?$")


def classify_symbol(text: str) -> Classified | None:
    if _DATA_FILE_RE.search(text) or text in REPO_ROOT_FILES or DOCKERFILE_RE.fullmatch(text):
        return None  # `CMakeLists.txt`, `README.md`, `Makefile`, `Dockerfile.cpu`: a file's name, not a symbol
    template = _TEMPLATE_CALL_RE.match(text)
    if template is not None:
        name = template.group("name")
        if name in FOREIGN_NAMES or name in BUILTINS:
            return None
        return Classified(SYMBOL, name, None, "", tentative=True)
    name = text
    call = _CALL_RE.match(text)
    is_call = call is not None
    if call is not None:
        name = call.group("name")
    if not _DOTTED_RE.match(name):
        return None
    parts = name.split(".")
    while len(parts) > 1 and parts[-1] in _MODULE_DUNDERS:
        parts = parts[:-1]  # `sglang.__file__`: the module
    name = ".".join(parts)
    root = parts[0]
    if root in PYTHON_BUILTINS and not root.isupper():
        return None  # `len(key)`, `EOFError`, `dict.get`: Python's
    if root in PACKAGE_ROOTS:
        return Classified(SYMBOL, name, PACKAGE_ROOTS[root], "module path")
    if len(parts) >= 2 and env_framework(parts[-1]) and parts[-2] in {"envs", "environ"}:
        return Classified(ENV, parts[-1], env_framework(parts[-1]), "env var prefix")
    if root in FOREIGN_ROOTS or root in FOREIGN_NAMES:
        return None
    if _CAMEL_RE.match(root):
        return Classified(SYMBOL, name, None, "")
    if len(parts) == 1 and is_call and not root.isupper() and len(root.strip("_")) > 1:
        # (`q(·)`, `f(x)`: a formula's function, not a name of the code.)
        return Classified(SYMBOL, name, None, "")
    if len(parts) == 1 and "_" in root.strip("_") and root.islower():
        return Classified(SYMBOL, name, None, "", tentative=True)
    if len(parts) == 1 and root.isupper() and len(root) >= 3 and not root.startswith(FOREIGN_ENV_PREFIXES) and root not in CAPS_WORDS:
        # `LLM`, `WAITING`: a class or a constant when a pin defines it, else a word in capitals.
        return Classified(SYMBOL, name, None, "caps", tentative=True)
    if 2 <= len(parts) <= 3 and root.islower() and root.isidentifier() and root not in BUILTINS:
        # `scheduler.schedule()`, `running_batch.batch_is_full`: a member through an object.
        return Classified(SYMBOL, parts[-1], None, f"instance:{root}", tentative=True)
    return None


# (`page_size == 1` is a comparison, not a keyword.)
_PARAM_RE = re.compile(r"^(?P<name>[a-z][a-z0-9]*_[a-z0-9_]*)\s*=(?!=)\s*\S.*$")


def classify_param(text: str) -> Classified | None:
    """`enable_prefix_caching=True`: a keyword the project takes, checked by its name when a pin
    defines it (an engine argument, a config field), else left alone."""
    m = _PARAM_RE.match(text)
    if m is None:
        return None
    return Classified(SYMBOL, m.group("name"), None, "keyword", tentative=True)


_METRIC_NAME_RE = re.compile(r"^(?P<project>vllm|sglang):(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\{[^{}]*\})?$")


def classify_metric(text: str) -> Classified | None:
    """`vllm:num_requests_running`, `sglang:num_running_reqs{model_name="m"}`: a metric the server exports."""
    m = _METRIC_NAME_RE.match(text)
    if m is None:
        return None
    return Classified(METRIC, f"{m.group('project')}:{m.group('name')}", m.group("project"), "metric name")


# `List[SequenceGroupMetadata]`, `Optional[Req]`: a container type in code font around one class.
_GENERIC_RE = re.compile(
    r"^(?:typing\.)?(?:List|Optional|Dict|Tuple|Set|FrozenSet|Sequence|Iterable|Iterator|Deque|Type|list|dict|tuple|set|type|deque)\[(?P<args>.+)\]$"
)
_TYPE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def classify_type_expression(text: str) -> Classified | None:
    """The one class a container type names (`List[PhysicalTokenBlock]` -> `PhysicalTokenBlock`):
    the type cites it as its own name would. Types of other libraries (`torch.Tensor`), typing's
    names and builtins say nothing; two classes or more (`Dict[SeqId, BlockTable]`) are not read."""
    m = _GENERIC_RE.match(text)
    if m is None:
        return None
    names = set()
    for name in _TYPE_NAME_RE.findall(m.group("args")):
        root, last = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
        if root in FOREIGN_ROOTS or last in FOREIGN_NAMES or last in PYTHON_BUILTINS or _GENERIC_RE.match(f"{last}[x]"):
            continue
        if not _CAMEL_RE.match(last):
            return None  # `Dict[seq_id, ...]`: a name of the author's
        names.add(name)
    if len(names) != 1:
        return None
    found = classify_symbol(names.pop())
    if found is None or found.kind != SYMBOL:
        return None
    return replace(found, reason=found.reason or "a container type's element")


def classify(text: str) -> Classified | None:
    """Classify one code span's text; None when it is not a reference."""
    text = text.strip()
    if not text or "\n" in text:
        return None
    return (
        classify_flag(text)
        or classify_env(text)
        or classify_metric(text)
        or classify_scoped(text)
        or classify_path(text)
        or classify_symbol(text)
        or classify_type_expression(text)
        or classify_param(text)
        or classify_comparison(text)
    )


# `mamba_lock_ref == 0`, `num_tokens >= budget`: a name compared with a value.
_COMPARISON_RE = re.compile(r"^(?P<name>_*[a-z][a-z0-9]*_[a-z0-9_]*)\s*(?:==|!=|<=|>=|<|>|\bis\b(?:\s+not\b)?)\s*\S.*$")


def classify_comparison(text: str) -> Classified | None:
    """The name a comparison tests (held-out 23's "only nodes with `mamba_lock_ref == 0`"): read as
    the bare `snake_case` name it is, tentatively (a field when a pin defines it)."""
    m = _COMPARISON_RE.match(text)
    return None if m is None else Classified(SYMBOL, m.group("name"), None, "compared", tentative=True)
