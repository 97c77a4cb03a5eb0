"""The router: one OpenAI-compatible endpoint in front of several engine servers.

    client --HTTP--> Router (proxy.py) --HTTP--> worker servers (colocated, or prefill + decode)
                      |- policy: round_robin | least_outstanding | cache_aware (approx_tree.py)
                      |- health.py: probes, removal, re-admission
                      '- retries before the first token; SSE passthrough after it

`atlas engine router --worker URL ...` runs one; `atlas engine cluster` starts workers and
a router together (launch.py).
"""
