"""Building blocks shared by every model family: norms, RoPE, activations, paged attention."""
