"""A readable LLM inference engine in PyTorch that runs on a CPU."""
