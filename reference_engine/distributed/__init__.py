"""One model over several processes (torch.distributed: gloo on a CPU, NCCL on CUDA).

One concept per file:
- parallel_state.py: groups of ranks and their collectives (GroupCoordinator, ParallelState)
- parallel_config.py: layouts that do not fit the model fail before any rank starts
- executor.py: the driver (rank 0): spawns or joins the ranks, broadcasts each step, stops
  every rank when one fails; worker.py: the other ranks' loop
- parallel_linear.py, vocab_parallel_embedding.py: tensor parallelism
- pipeline_parallel.py: stages of layers, steps passed stage to stage, bubble fraction
  (the engine keeps one step per stage in flight: ../batch_queue.py)
- expert_dispatch.py, expert_placement.py, eplb.py: expert parallelism and its balancing
- context_parallel.py: tokens and KV striped over ranks; ring_attention.py: its ring and
  LSE merge
- cli_options.py: --tp/--pp/--ep/--cp
- custom_all_reduce.py: ring, recursive doubling, one-shot and two-shot all-reduce written
  with point-to-point sends, and their alpha-beta costs (benchmarks/allreduce_bench.py)
"""
