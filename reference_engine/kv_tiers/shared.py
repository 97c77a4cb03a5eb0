"""SharedTier: KV blocks in a Redis / Valkey server that several engine instances reach,
so a prefix one instance computed is a hit on another (LMCache's remote backend and
HiCache's storage backends play this part).

Entries are the same checksummed bytes as the other tiers (entry.py), stored under
`atlas:kv:<layout digest>:<key>`, so instances of another model never collide. Capacity
and eviction are the server's (`maxmemory` with an LRU policy). The tier is best effort:
unreachable at startup is a clear error; unreachable later (the server died) makes every
lookup a miss and every store a no-op, counted in `errors`, and the engine recomputes.
"""

from __future__ import annotations

import hashlib

from reference_engine.kv_tiers.host import TierStats


class SharedTierError(ValueError):
    """The shared tier cannot be used at all (bad URL, server unreachable at startup)."""


class SharedTier:
    name = "shared"

    def __init__(self, url: str, layout: str, timeout_s: float = 0.5) -> None:
        try:
            import redis
        except ImportError:  # pragma: no cover - an engine extra
            raise SharedTierError("the shared KV tier needs the `redis` package") from None
        self.url = url
        self.stats = TierStats()
        self.errors = 0  # lookups and stores that failed because the server did not answer
        self.capacity = 0  # the server decides (maxmemory); 0 means "not ours to say"
        self._prefix = f"atlas:kv:{hashlib.blake2b(layout.encode(), digest_size=8).hexdigest()}:"
        try:
            self._client = redis.Redis.from_url(
                url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
            )
            self._client.ping()
        except (redis.RedisError, ValueError) as exc:
            raise SharedTierError(f"cannot reach the shared KV tier at {url}: {exc}") from None
        self._error_types: tuple[type[BaseException], ...] = (redis.RedisError, OSError)

    def _name(self, key: bytes) -> str:
        return self._prefix + key.hex()

    def __contains__(self, key: bytes) -> bool:
        try:
            return bool(self._client.exists(self._name(key)))
        except self._error_types:
            self.errors += 1
            return False

    def __len__(self) -> int:
        try:
            return sum(1 for _ in self._client.scan_iter(match=self._prefix + "*", count=1000))
        except self._error_types:
            self.errors += 1
            return 0

    def get(self, key: bytes) -> bytes | None:
        self.stats.lookups += 1
        try:
            data = self._client.get(self._name(key))
        except self._error_types:
            self.errors += 1
            return None
        if data is None:
            return None
        self.stats.hits += 1
        return bytes(data)  # type: ignore[arg-type]

    def put(self, key: bytes, data: bytes) -> None:
        try:
            if self._client.set(self._name(key), data, nx=True):
                self.stats.stored += 1
        except self._error_types:
            self.errors += 1

    def drop(self, key: bytes) -> None:
        self.stats.corrupt += 1
        try:
            self._client.delete(self._name(key))
        except self._error_types:
            self.errors += 1
