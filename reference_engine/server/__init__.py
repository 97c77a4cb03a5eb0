"""OpenAI-compatible HTTP server for the reference engine (FastAPI + uvicorn).

`atlas engine serve` starts it; `build_app` gives the ASGI app for tests.
"""
