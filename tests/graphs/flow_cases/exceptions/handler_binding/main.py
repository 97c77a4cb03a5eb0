# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Bad(Exception):
    def __init__(self, msg):
        self.msg = msg

    def __str__(self):
        return self.msg

    def describe(self):
        return self.msg


class Worse(Bad):
    def describe(self):
        return "worse"


class Other:
    def describe(self):
        return "other"


def fail(n):
    if n:
        raise Worse("w")
    raise Bad("b")


def handle(n):
    try:
        fail(n)
    except Bad as e:
        str(e)
        e.describe()


def handle_tuple(n):
    try:
        fail(n)
    except (KeyError, Bad) as err:
        err.describe()


handle(0)
handle(1)
handle_tuple(0)
handle_tuple(1)
Other().describe()
