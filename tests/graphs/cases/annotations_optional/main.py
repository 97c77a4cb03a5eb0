# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from typing import Optional


class Worker:
    def work(self):
        return 1


class Holder:
    worker: Worker

    def __init__(self, worker: Optional[Worker] = None, backup: Worker | None = None):
        self.worker = worker
        self.backup = backup

    def run(self):
        self.worker.work()
        self.backup.work()


def drive(w: "Optional[Worker]"):
    w.work()
