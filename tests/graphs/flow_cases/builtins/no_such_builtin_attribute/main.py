# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A call no value of the builtin type seen could answer (`None.log`, a tuple's
# `settimeout`) names no builtin method: the receiver is a value the analysis
# did not see (a placeholder filled in elsewhere, the other side of an isinstance).
import io


class Handler:
    stream = None

    def handle(self):
        self.stream.write("x")


class Sized(Handler):
    stream = io.StringIO()


def send(sock):
    target = sock if sock else ("host", 22)
    if isinstance(target, io.StringIO):
        target.write("y")
    return target


def run():
    Sized().handle()
    send(None)
    send(io.StringIO())


run()
