"""A small Qwen3 model TRAINED here, on code every machine has offline: real statistics for
perplexity, quantization error, speculative acceptance and KV eviction, without a download.

It is a small model trained on Python source code, NOT a chat model: it continues code.
The corpus is the standard library's own `.py` sources of the running interpreter (tests,
IDLE, codec tables and 2to3 left out; each file capped at 64 KiB), nothing of this
repository: editing a book example must not retrain the model or move every figure measured
on it. Every tenth file is held out; perplexity is measured on those unseen files
and printed beside a unigram baseline (token frequencies alone).

Recipes (`RECIPES`): "default" (~4M parameters, a few minutes on one core) and "small"
(~1M, well under a minute, for tests). Both share one byte-level BPE tokenizer trained with
`tokenizers`, so either can draft for the other. Training is seeded and runs on one torch
thread, so the same recipe, corpus and versions give the same bytes; the cache folder is
keyed by a hash of exactly those, so a new Python (other corpus) or torch retrains.

`trained_model_dir()` is the one entry point tests and benchmarks use: it returns the
cached checkpoint folder (a normal Hugging Face folder: config.json, model.safetensors,
tokenizer.json, plus `heldout.txt` and `training.json`), training it first when missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import platform
import shutil
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from reference_engine.tiny_model import SPECIAL_TOKENS, _write_json, write_checkpoint
from reference_engine.tiny_trainer import (
    TrainableQwen3,
    TrainShape,
    init_weights,
    perplexity,
    train,
    unigram_perplexity,
)

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TRAINED_MODEL_NAME = "atlas-code-qwen3"
RECIPE_VERSION = 2  # bump when anything below changes the bytes
NOTICE = (
    "atlas-code-qwen3 is a small model trained here on Python source code (the Python "
    "standard library): it continues code; it is NOT a chat model"
)
VOCAB_SIZE = 4096
SEED = 20240601
TRAIN_THREADS = 1  # fixed: matmul reduction order, hence the bytes, depends on it
HELDOUT_EVERY = 10  # every tenth corpus file is held out
MAX_FILE_BYTES = 64 * 1024
MAX_POSITION_EMBEDDINGS = 4096

RECIPES: dict[str, TrainShape] = {
    "default": TrainShape(
        hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=64, seq_len=512, batch_size=2, steps=500, lr=3e-3,
        warmup=30,
    ),
    "small": TrainShape(
        hidden_size=128, intermediate_size=384, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, seq_len=128, batch_size=8, steps=450, lr=3e-3,
        warmup=20,
    ),
}
EVAL_TOKENS = {"default": 32768, "small": 16384}

_SKIP_DIRS = {
    "test", "tests", "idlelib", "site-packages", "dist-packages", "lib2to3", "encodings",
    "pydoc_data", "ensurepip", "turtledemo", "__pycache__",
}


@dataclass(frozen=True, slots=True)
class TrainReport:
    """What one training run measured; written to `training.json` in the folder."""

    variant: str
    recipe_key: str
    parameters: int
    train_tokens: int
    heldout_tokens: int
    heldout_perplexity: float
    unigram_perplexity: float
    first_loss: float
    final_loss: float
    seconds: float
    notice: str = NOTICE


# ---------------------------------------------------------------- corpus


def corpus_files() -> list[tuple[str, Path]]:
    """(stable name, path) of every corpus file, in a fixed order."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[tuple[str, Path]] = []
    for p in sorted(stdlib.rglob("*.py")):
        rel = p.relative_to(stdlib)
        if set(rel.parts[:-1]) & _SKIP_DIRS or rel.parts[0].startswith("config-"):
            continue
        files.append((f"stdlib/{rel.as_posix()}", p))
    return files


@functools.cache
def read_corpus() -> tuple[list[str], list[str], str]:
    """(train texts, held-out texts, sha256 of all of it); read once per process (callers
    must not modify the lists)."""
    digest = hashlib.sha256()
    train_texts: list[str] = []
    heldout: list[str] = []
    for i, (name, path) in enumerate(corpus_files()):
        raw = path.read_bytes()[:MAX_FILE_BYTES]
        text = raw.decode("utf-8", errors="replace")
        digest.update(name.encode() + b"\0" + raw + b"\0")
        (heldout if i % HELDOUT_EVERY == HELDOUT_EVERY - 1 else train_texts).append(text)
    return train_texts, heldout, digest.hexdigest()


def recipe_key(variant: str, corpus_digest: str) -> str:
    """Hash of everything the checkpoint's bytes depend on."""
    import tokenizers

    payload = {
        "recipe_version": RECIPE_VERSION,
        "shape": asdict(RECIPES[variant]),
        "vocab": VOCAB_SIZE,
        "seed": SEED,
        "threads": TRAIN_THREADS,
        "eval_tokens": EVAL_TOKENS[variant],
        "corpus": corpus_digest,
        "torch": torch.__version__,
        "tokenizers": tokenizers.__version__,
        "machine": platform.machine(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def train_tokenizer(texts: list[str]) -> Tokenizer:
    """Byte-level BPE (as Qwen's): any UTF-8 text encodes, no unknown token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def encode_docs(tok: Tokenizer, texts: list[str]) -> torch.Tensor:
    """All documents as one stream, each followed by <|endoftext|>."""
    eot = tok.token_to_id("<|endoftext|>")
    if eot is None:
        raise ValueError("the tokenizer has no <|endoftext|> token to separate documents")
    ids: list[int] = []
    for enc in tok.encode_batch(texts):
        ids.extend(enc.ids)
        ids.append(eot)
    return torch.tensor(ids, dtype=torch.long)


# ---------------------------------------------------------------- the cached folder


def default_cache_dir() -> Path:
    # The same folder atlas uses ($ATLAS_CACHE_DIR or the per-user cache), read without
    # importing the analyzer.
    env = os.environ.get("ATLAS_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("serving-atlas"))


def trained_model_dir(
    variant: str = "default",
    cache_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """The cached checkpoint folder of `variant`, trained first when missing (one process
    trains, concurrent callers wait on a file lock and then reuse it)."""
    if variant not in RECIPES:
        raise ValueError(f"unknown variant {variant!r}; choose one of {sorted(RECIPES)}")
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    train_texts, heldout, digest = read_corpus()
    key = recipe_key(variant, digest)
    target = root / "models" / f"{TRAINED_MODEL_NAME}-{variant}-{key}"
    if (target / "training.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(target.parent / f".{target.name}.lock"):
        if (target / "training.json").is_file():
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            write_trained_model(tmp, variant, (train_texts, heldout, digest), log=log)
            tmp.chmod(0o755)  # mkdtemp makes it private; the cache is shared
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def write_trained_model(
    folder: Path,
    variant: str,
    corpus: tuple[list[str], list[str], str] | None = None,
    log: Callable[[str], None] | None = None,
    steps: int | None = None,
) -> TrainReport:
    """Train `variant` and write its checkpoint folder; `steps` overrides the recipe's
    step count (the determinism test trains a few steps twice)."""
    started = time.perf_counter()
    train_texts, heldout, digest = corpus if corpus is not None else read_corpus()
    shape = RECIPES[variant]
    if steps is not None:
        shape = TrainShape(**{**asdict(shape), "steps": steps, "warmup": min(shape.warmup, steps)})
    say = log or (lambda _msg: None)
    say(f"training the byte-level BPE tokenizer ({VOCAB_SIZE} tokens) on {len(train_texts)} files")
    tok = train_tokenizer(train_texts)
    train_ids = encode_docs(tok, train_texts)
    eval_ids = encode_docs(tok, heldout)[: EVAL_TOKENS[variant]]
    with _torch_threads(TRAIN_THREADS):
        torch.manual_seed(SEED)
        model = TrainableQwen3(shape, VOCAB_SIZE)
        init_weights(model, torch.Generator().manual_seed(SEED))
        n_params = sum(p.numel() for p in model.parameters())
        say(f"training {variant}: {n_params / 1e6:.2f}M parameters, {shape.steps} steps of "
            f"{shape.batch_size}x{shape.seq_len} tokens from {len(train_ids)} training tokens")
        losses = train(model, train_ids, seed=SEED, log=say)
        ppl = perplexity(model, eval_ids, shape.seq_len)
    report = TrainReport(
        variant=variant,
        recipe_key=recipe_key(variant, digest),
        parameters=n_params,
        train_tokens=shape.steps * shape.batch_size * shape.seq_len,
        heldout_tokens=len(eval_ids),
        heldout_perplexity=round(ppl, 4),
        unigram_perplexity=round(unigram_perplexity(train_ids, eval_ids, VOCAB_SIZE), 4),
        first_loss=round(losses[0], 4),
        final_loss=round(losses[-1], 4),
        seconds=round(time.perf_counter() - started, 1),
    )
    weights = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    write_checkpoint(folder, hf_config(shape, report), weights, tok)
    (folder / "heldout.txt").write_text(tok.decode(eval_ids.tolist(), skip_special_tokens=False),
                                        encoding="utf-8")
    training = asdict(report)
    training["losses"] = [round(x, 4) for x in losses]
    _write_json(folder / "training.json", training)
    (folder / "README.md").write_text(
        f"# {TRAINED_MODEL_NAME} ({variant})\n\n{NOTICE}.\n\n"
        f"Held-out perplexity {report.heldout_perplexity:.2f} (unigram baseline "
        f"{report.unigram_perplexity:.2f}) on {report.heldout_tokens} tokens of unseen files "
        "(`heldout.txt`).\nTrained by `atlas engine train-tiny`; see "
        "`reference_engine/trained_model.py`.\n",
        encoding="utf-8",
    )
    return report


def hf_config(shape: TrainShape, report: TrainReport) -> dict[str, Any]:
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "vocab_size": VOCAB_SIZE,
        "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "num_hidden_layers": shape.num_hidden_layers,
        "num_attention_heads": shape.num_attention_heads,
        "num_key_value_heads": shape.num_key_value_heads,
        "head_dim": shape.head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": shape.rms_norm_eps,
        "rope_theta": shape.rope_theta,
        "max_position_embeddings": MAX_POSITION_EMBEDDINGS,
        "tie_word_embeddings": True,
        "attention_bias": False,
        "torch_dtype": "float32",
        "bos_token_id": None,
        "eos_token_id": 0,  # <|endoftext|>: the end of a source file
        "atlas_notice": NOTICE,
        "atlas_trained": {"variant": report.variant, "recipe_key": report.recipe_key,
                          "trained_context": shape.seq_len},
    }


def read_report(folder: Path) -> dict[str, Any]:
    """The figures `training.json` holds (perplexities, parameters, losses)."""
    data: dict[str, Any] = json.loads((Path(folder) / "training.json").read_text("utf-8"))
    return data


def heldout_text(folder: Path) -> str:
    """The held-out evaluation text saved beside the weights (files never trained on)."""
    return (Path(folder) / "heldout.txt").read_text(encoding="utf-8")
