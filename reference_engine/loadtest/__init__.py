"""A load generator for OpenAI-compatible servers (`atlas engine loadtest URL`).

Open loop (Poisson arrivals at a fixed rate) or closed loop (fixed concurrency),
streaming every request and timing each token as it arrives, in the spirit of
`vllm bench serve` and `sglang.bench_serving`.
"""
