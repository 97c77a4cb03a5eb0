"""An attribute set up as None and filled elsewhere (`group.leader = req`): what it
holds is what is stored into it."""

from __future__ import annotations


class Req:
    def __init__(self) -> None:
        self.status = "waiting"


class Ticket:
    def __init__(self) -> None:
        self.status = "open"


class Group:
    def __init__(self) -> None:
        self.leader = None


class Desk:
    def __init__(self) -> None:
        self.leader = None  # another class's `leader`, holding a Ticket


class Coordinator:
    def start(self, group: Group, req: Req) -> None:
        group.leader = req

    def open_desk(self, desk: Desk) -> None:
        desk.leader = Ticket()

    def finish(self, group: Group) -> None:
        leader = group.leader
        leader.status = "finished"

    def close_desk(self, desk: Desk) -> None:
        desk.leader.status = "closed"
