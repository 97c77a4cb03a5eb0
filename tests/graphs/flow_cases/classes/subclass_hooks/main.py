# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A base class method calls a hook that only its subclasses set, each to its
# own bound method: on an instance of either, the base runs that subclass's.
class Exporter:
    def export(self):
        self.sink()


class ToFile(Exporter):
    def __init__(self):
        self.sink = self.write_file

    def write_file(self):
        pass


class ToSocket(Exporter):
    def __init__(self):
        self.sink = self.send

    def send(self):
        pass


ToFile().export()
ToSocket().export()
