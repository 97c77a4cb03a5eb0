# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A function whose every return is one outside class's object types its result:
# `self._client.fetch()` is ext.Client.fetch, not a guess at the project's own `fetch`.
import ext


class Local:
    def fetch(self):
        return 1


def connect(host):
    client = ext.Client(host)
    if not host:
        return None
    return client


class Holder:
    def start(self):
        self._client = connect("h")

    def use(self):
        return self._client.fetch()
