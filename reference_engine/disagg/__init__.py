"""Prefill/decode disaggregation: one instance computes prompts, another decodes from their KV.

A request crosses four bridges (the router drives them, as vLLM's disaggregated proxy does):

1. router -> prefill server, HTTP: the request with `kv_transfer_params={"do_remote_decode":
   true}` runs with max_tokens=1. When it finishes, on the engine thread and before any
   other step, `PrefillRole` pins the prompt's cached KV blocks under a transfer id
   (`KVCacheManager.pin_cached_prefix`), with a lease.
2. prefill -> router, HTTP: the response carries `kv_transfer_params` naming the prefill's
   KV endpoint, the transfer id and the number of tokens pinned.
3. router -> decode server, HTTP: the original request plus those params. `DecodeRole`
   opens a session on the prefill's KV endpoint (the connector, here ZeroMQ over TCP):
   describe (handshake: KV layout, model fingerprint, token ids), allocate blocks on
   the decode side, pull every layer's K/V, write them into the blocks and index them in
   the prefix cache, then tell the sender it is done, which unpins the blocks there.
4. The decode engine admits the request as a prefix-cache hit of everything transferred,
   computes only the last prompt token and decodes on; the receiver's pin is dropped
   right after admission (a request hook, on the engine thread).

Either side may give up at any point: an aborted or failed pull frees the receiver's
blocks and tells the sender (which unpins), and the request computes its prompt itself;
a sender whose receiver vanished (a killed decode instance) unpins when the lease ends.
"""

from reference_engine.disagg.connector import KVReceiver, KVSender, KVSession, KVSource
from reference_engine.disagg.decode import DecodeRole
from reference_engine.disagg.prefill import PrefillRole
from reference_engine.disagg.transfer import KVLayout, RemoteKV, TransferError, TransferInfo

__all__ = [
    "DecodeRole",
    "KVLayout",
    "KVReceiver",
    "KVSender",
    "KVSession",
    "KVSource",
    "PrefillRole",
    "RemoteKV",
    "TransferError",
    "TransferInfo",
]
