"""Speculative decoding: propose draft tokens cheaply, verify them in one target forward pass.

One concept per file:
- config.py             SpeculativeConfig (vLLM's `speculative_config` dict)
- proposer.py           the Proposer interface every drafter implements
- ngram_proposer.py     prompt lookup: continue a suffix n-gram seen earlier in the sequence
- draft_model_proposer.py  a smaller checkpoint with its own KV cache, run by ModelRunner
- rejection_sampler.py  accept / resample so the output keeps the target distribution
- draft_length.py       the load-adaptive number of draft tokens per step
- metrics.py            acceptance per position, mean accepted length, draft / verify time
- spec_decoder.py       the glue the engine calls: propose after a step, verify in the next
"""

from reference_engine.spec_decode.config import SpeculativeConfig
from reference_engine.spec_decode.metrics import SpecDecodingStats

__all__ = ["SpecDecodingStats", "SpeculativeConfig"]
