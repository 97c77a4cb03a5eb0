"""`atlas engine simulate`: capacity planning with the discrete-event simulator."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from reference_engine.commands import MODEL, THREADS, _settings
from reference_engine.exit_codes import guard

KNOBS = ("max_num_seqs", "max_num_batched_tokens", "prefix_caching", "enable_chunked_prefill")


def add_simulate_command(engine_app: typer.Typer) -> None:
    engine_app.command("simulate")(simulate_command)


def simulate_command(
    ctx: typer.Context,
    model: Path = MODEL,
    threads: int = THREADS,
    cost_model: Path = typer.Option(
        None, "--cost-model", help="A fitted step-cost model (JSON); default: calibrate now."
    ),
    save_cost_model: Path = typer.Option(
        None, "--save-cost-model", help="Write the fitted step-cost model here."
    ),
    rate: list[float] = typer.Option(
        None, "--rate", "-r", help="Open loop: Poisson arrivals per second (repeatable)."
    ),
    concurrency: int = typer.Option(None, "--concurrency", "-c", min=1, help="Closed loop."),
    num_prompts: int = typer.Option(None, "--num-prompts", "-n", min=1),
    duration: float = typer.Option(
        None, "--duration", "-d", min=0.0, help="Simulated seconds of arrivals."
    ),
    dataset: Path = typer.Option(None, "--dataset", help='JSONL of {"prompt", "max_tokens"}.'),
    min_prompt_words: int = typer.Option(16, "--min-prompt-words", min=1),
    max_prompt_words: int = typer.Option(64, "--max-prompt-words", min=1),
    shared_prefix_words: int = typer.Option(
        0, "--shared-prefix-words", min=0, help="The same first words in every prompt."
    ),
    min_output_len: int = typer.Option(16, "--min-output-len", min=1),
    max_output_len: int = typer.Option(64, "--max-output-len", min=1),
    seed: int = typer.Option(0, "--seed"),
    max_num_seqs: int = typer.Option(32, "--max-num-seqs", min=1),
    max_num_batched_tokens: int = typer.Option(512, "--max-num-batched-tokens", min=1),
    prefix_caching: str = typer.Option("hash", "--prefix-caching", help="none, hash or radix."),
    chunked_prefill: bool = typer.Option(True, "--enable-chunked-prefill/--no-chunked-prefill"),
    slo_ttft_p99: float = typer.Option(
        None, "--slo-ttft-p99", min=0.0, help="Find the largest rate with TTFT p99 <= this (ms)."
    ),
    slo_tpot_p99: float = typer.Option(
        None, "--slo-tpot-p99", min=0.0, help="... and TPOT p99 <= this (ms)."
    ),
    sweep: list[str] = typer.Option(
        None,
        "--sweep",
        help="KNOB=V1,V2,...: repeat the max-rate search per value (max_num_seqs, "
        "max_num_batched_tokens, prefix_caching, enable_chunked_prefill).",
    ),
    step_noise: bool = typer.Option(
        True,
        "--step-noise/--no-step-noise",
        help="Draw each step's time from the calibration's measured spread (tails), or use "
        "the fitted mean.",
    ),
    step_scale: float = typer.Option(
        None, "--step-scale", min=0.0, help="Multiply every step time (served / engine-alone)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
) -> None:
    """Predict throughput and TTFT / TPOT percentiles for a workload, a configuration and
    an arrival rate: the real scheduler and KV cache manager, steps timed by a cost model
    fitted on this machine. With an SLO, find the largest rate that meets it."""
    settings = _settings(ctx)
    console = Console(stderr=True)

    def go() -> None:
        from reference_engine.capacity.cost_model import StepCostModel
        from reference_engine.capacity.planner import LatencyObjective, max_rate, report_of
        from reference_engine.capacity.simulator import Traffic
        from reference_engine.loadtest.workload import load_jsonl, synthetic_workload

        base = {
            "max_num_seqs": max_num_seqs,
            "max_num_batched_tokens": max_num_batched_tokens,
            "prefix_caching": prefix_caching,
            "enable_chunked_prefill": chunked_prefill,
        }
        sweeps = [_parse_sweep(s) for s in sweep or []]
        objective = (
            LatencyObjective(slo_ttft_p99, slo_tpot_p99)
            if slo_ttft_p99 is not None or slo_tpot_p99 is not None
            else None
        )
        if sweeps and objective is None:
            raise ValueError("--sweep needs a latency objective (--slo-ttft-p99 / --slo-tpot-p99)")
        if objective is None and not rate and concurrency is None:
            raise ValueError("give --rate (repeatable), --concurrency, or a latency objective")
        if rate and concurrency is not None:
            raise ValueError("give --rate or --concurrency, not both")

        engine_builder = _EngineFacts(settings, model, threads, base, step_noise)
        if cost_model is not None:
            cost = StepCostModel.load(cost_model)
        else:
            console.print("calibrating the step-cost model on this machine ...", highlight=False)
            cost = engine_builder.calibrate()
        if step_scale is not None:
            if not step_scale > 0:
                raise ValueError("--step-scale must be positive")
            cost.scale = step_scale
        if save_cost_model is not None:
            cost.save(save_cost_model)
        tokenizer = engine_builder.tokenizer()
        texts = (
            load_jsonl(dataset)
            if dataset is not None
            else synthetic_workload(
                min(num_prompts or 1000, 1000),
                (min_prompt_words, max_prompt_words),
                (min_output_len, max_output_len),
                seed=seed,
                shared_prefix_words=shared_prefix_words,
            )
        )
        requests = _encode(texts, tokenizer)
        total = num_prompts if num_prompts is not None or duration is not None else 1000
        traffic = Traffic(
            requests,
            rate=(rate[0] if rate else 1.0) if concurrency is None else None,
            concurrency=concurrency,
            num_requests=total,
            duration_s=duration,
            seed=seed,
        )
        payload: dict[str, Any] = {"cost_model": dataclasses.asdict(cost), "runs": []}
        if objective is None:
            for r in rate or [None]:
                knobs = dict(base)
                sim = engine_builder.simulator(cost, knobs).run(
                    dataclasses.replace(traffic, rate=r) if r is not None else traffic
                )
                payload["runs"].append(_run_json(r, concurrency, knobs, sim, report_of(sim)))
        else:
            payload["objective"] = dataclasses.asdict(objective)
            payload["max_rate"] = []
            variants = [dict(base)]
            for knob, values in sweeps:
                variants = [{**v, knob: value} for v in variants for value in values]
            for knobs in variants:
                best, probes = max_rate(engine_builder.simulator(cost, knobs), traffic, objective)
                at_best = max((p for p in probes if p.ok), key=lambda p: p.rate, default=None)
                payload["max_rate"].append(
                    {
                        **knobs,
                        "max_rate": best,
                        "probes": len(probes),
                        "at_max": None if at_best is None else _latency_json(at_best.report),
                    }
                )
        if json_output:
            typer.echo(json.dumps(_clean(payload), indent=2))
        else:
            _print(Console(), cost, payload)

    guard(go)


class _EngineFacts:
    """Builds the real engine only when calibrating; otherwise reads the model's config."""

    def __init__(
        self,
        settings: Any,
        model: Path | None,
        threads: int | None,
        knobs: dict[str, Any],
        noise: bool,
    ):
        self.settings, self.model, self.threads, self.knobs = settings, model, threads, knobs
        self.noise = noise
        self._engine: Any = None

    def _config(self, knobs: dict[str, Any]) -> Any:
        from reference_engine.config import EngineConfig

        return EngineConfig(
            model=str(self.model) if self.model is not None else None,
            cache_dir=self.settings.cache_dir,
            **knobs,
        )

    def calibrate(self) -> Any:
        import torch

        from reference_engine.capacity.calibrate import calibrate
        from reference_engine.commands import _make_engine

        self._engine = _make_engine(self.settings, self.model, self.threads, **self.knobs)
        return calibrate(self._engine, str(self.model or "tiny"), torch.get_num_threads())

    def tokenizer(self) -> Any:
        from reference_engine.loader import load_model_config, load_tokenizer

        if self._engine is not None:
            return self._engine.tokenizer
        model_config = load_model_config(self._config(self.knobs))
        if model_config.model_dir is None:
            raise ValueError("this model has no folder, so no tokenizer to tokenize the workload")
        return load_tokenizer(model_config.model_dir)

    def simulator(self, cost: Any, knobs: dict[str, Any]) -> Any:
        from reference_engine.capacity.simulator import Simulator
        from reference_engine.loader import load_model_config
        from reference_engine.scheduler import SchedulerConfig

        cfg = self._config(knobs)
        model_config = load_model_config(cfg)
        return Simulator(
            cost,
            SchedulerConfig(
                max_num_seqs=cfg.max_num_seqs,
                max_num_batched_tokens=cfg.max_num_batched_tokens,
                enable_chunked_prefill=cfg.enable_chunked_prefill,
                prefix_caching=cfg.prefix_caching != "none",
            ),
            prefix_caching=cfg.prefix_caching,
            vocab_size=model_config.vocab_size,
            # The KV pool the engine would size for this configuration (max_num_seqs moves it).
            num_blocks=cfg.resolved_num_blocks(model_config),
            noise=self.noise,
        )


def _encode(texts: list[Any], tokenizer: Any) -> list[Any]:
    from reference_engine.capacity.simulator import SimRequest

    # As the server's completions endpoint tokenizes a prompt.
    return [
        SimRequest(tokenizer.encode(t.prompt, add_special_tokens=True), t.max_tokens) for t in texts
    ]


def _parse_sweep(text: str) -> tuple[str, list[Any]]:
    knob, sep, values = text.partition("=")
    if not sep or knob not in KNOBS or not values:
        raise ValueError(
            f"--sweep takes KNOB=V1,V2 with KNOB one of {', '.join(KNOBS)}; got {text!r}"
        )
    out: list[Any] = []
    for v in values.split(","):
        if knob in ("max_num_seqs", "max_num_batched_tokens"):
            if not v.isdigit() or int(v) < 1:
                raise ValueError(f"--sweep {knob}: {v!r} is not a positive integer")
            out.append(int(v))
        elif knob == "enable_chunked_prefill":
            if v not in ("true", "false"):
                raise ValueError(f"--sweep {knob}: {v!r} is not true or false")
            out.append(v == "true")
        else:
            if v not in ("none", "hash", "radix"):
                raise ValueError(f"--sweep prefix_caching: {v!r} is not none, hash or radix")
            out.append(v)
    return knob, out


def _latency_json(report: Any) -> dict[str, Any]:
    return {
        "request_throughput": report.request_throughput,
        "output_throughput": report.output_throughput,
        "ttft_ms": {"p50": report.ttft_ms.p50, "p99": report.ttft_ms.p99},
        "tpot_ms": {"p50": report.tpot_ms.p50, "p99": report.tpot_ms.p99},
    }


def _run_json(
    rate: float | None, concurrency: int | None, knobs: dict[str, Any], sim: Any, report: Any
) -> dict[str, Any]:
    return {
        "rate": rate,
        "concurrency": concurrency,
        **knobs,
        "num_completed": report.num_completed,
        "simulated_s": sim.wall_s,
        "cpu_s": sim.cpu_s,
        "cpu_s_per_simulated_hour": sim.cpu_s_per_simulated_hour,
        "num_steps": sim.num_steps,
        "num_preemptions": sim.num_preemptions,
        "prefix_cache_hit_rate": sim.prefix_cache_hit_rate,
        **_latency_json(report),
    }


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _fmt(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"


def _print(console: Console, cost: Any, payload: dict[str, Any]) -> None:
    coef = ", ".join(f"{k} {v * 1e3:.4g} ms" for k, v in cost.coef.items())
    console.print(
        f"step-cost model ({cost.model}, {cost.threads} thread(s), {cost.num_samples} steps; "
        f"median error {cost.fit_error.get('median', 0):.1%}): {coef}",
        highlight=False,
    )
    if payload["runs"]:
        table = Table(title="atlas engine simulate")
        for col in ("rate", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50",
                    "TPOT p99", "sim s", "CPU s / sim h"):  # fmt: skip
            table.add_column(col, justify="right")
        for r in payload["runs"]:
            load = _fmt(r["rate"]) if r["rate"] is not None else f"c={r['concurrency']}"
            table.add_row(
                load, _fmt(r["request_throughput"]), _fmt(r["output_throughput"]),
                _fmt(r["ttft_ms"]["p50"]), _fmt(r["ttft_ms"]["p99"]),
                _fmt(r["tpot_ms"]["p50"]), _fmt(r["tpot_ms"]["p99"]),
                _fmt(r["simulated_s"]), _fmt(r["cpu_s_per_simulated_hour"]),
            )  # fmt: skip
        console.print(table)
        console.print("latencies in ms", highlight=False)
    if "max_rate" in payload:
        obj = payload["objective"]
        table = Table(
            title=f"largest rate with TTFT p99 <= {_fmt(obj['ttft_p99_ms'])} ms, "
            f"TPOT p99 <= {_fmt(obj['tpot_p99_ms'])} ms"
        )
        for col in (*KNOBS, "max rate (req/s)", "TTFT p99", "TPOT p99"):
            table.add_column(col, justify="right")
        for row in payload["max_rate"]:
            at = row["at_max"] or {"ttft_ms": {"p99": None}, "tpot_ms": {"p99": None}}
            table.add_row(
                *(str(row[k]) for k in KNOBS), _fmt(row["max_rate"]),
                _fmt(at["ttft_ms"]["p99"]), _fmt(at["tpot_ms"]["p99"]),
            )  # fmt: skip
        console.print(table)
