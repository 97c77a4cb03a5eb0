# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Request:
    def finish(self):
        return True
