# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import asyncio
import contextlib


class Session:
    def query(self):
        pass


class Pool:
    # `with Pool() as s` binds s to what __enter__ returns: a Session, not the Pool.
    def __enter__(self):
        return Session()

    def __exit__(self, *exc):
        return False

    def query(self):
        pass


class Timer:
    # __enter__ hands out a bound method: `with Timer() as stop: stop()`.
    def __enter__(self):
        return self.stop

    def __exit__(self, *exc):
        return False

    def stop(self):
        pass


class Base:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self):
        pass


class Child(Base):
    # inherits `return self`: the object entered is a Child
    def run(self):
        pass


@contextlib.contextmanager
def opened():
    # yields a Pool: `with opened() as t` binds t to the Pool itself (contextlib's
    # __enter__ returns what the generator yields; Pool.__enter__ does not run)
    yield Pool()


class Cursor:
    def fetch(self):
        pass


class Connection:
    # `async with Connection() as cur` binds cur to what awaiting __aenter__ gives
    async def __aenter__(self):
        return Cursor()

    async def __aexit__(self, *exc):
        return False

    def fetch(self):
        pass


async def read():
    async with Connection() as cur:
        cur.fetch()


def work():
    with Pool() as s:
        s.query()
    with Timer() as stop:
        stop()


with Child() as c:
    c.run()
with opened() as t:
    t.query()
work()
asyncio.run(read())
