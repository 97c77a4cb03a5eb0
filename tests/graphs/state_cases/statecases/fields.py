"""Stores into an attribute's own fields change the object the attribute holds."""


class Batch:
    def __init__(self) -> None:
        self.reqs: list[int] = []
        self.is_full = False


class Sched:
    def __init__(self) -> None:
        self.running_batch = Batch()

    def pause(self) -> None:
        self.running_batch.reqs = []
        self.running_batch.is_full = False

    def extend(self, req: int) -> None:
        self.running_batch.reqs.append(req)

    def size(self) -> int:
        return len(self.running_batch.reqs)
