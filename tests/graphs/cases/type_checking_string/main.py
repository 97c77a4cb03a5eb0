# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from models import Request


def done(req: "Request") -> bool:
    return req.finish()


def done_all(reqs: list[Request], first: Request):
    first.finish()
    return [done(r) for r in reqs]
