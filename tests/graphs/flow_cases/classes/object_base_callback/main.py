# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Path(object):
    def __init__(self, force=lambda _: False):
        self._force = force

    def absolute(self):
        return self._force(self)


class Url(object):
    def __init__(self):
        self.path = Path(force=self._force)

    def _force(self, path):
        return True


def plain():
    return Path().absolute()


Url().path.absolute()
plain()
