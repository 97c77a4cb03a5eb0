"""Images in the engine, beside the core (vLLM's multimodal/ + v1 encoder cache; SGLang's
managers/mm_utils): a request's images are processed into patches (image_processor.py),
their placeholder tokens expanded and given multimodal RoPE positions (inputs.py, mrope.py),
the vision encoder's outputs cached by image hash (encoder_cache.py), and each step's
embeddings and positions handed to the model (manager.py)."""
