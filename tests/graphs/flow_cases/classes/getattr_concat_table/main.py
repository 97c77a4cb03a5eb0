# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A rule table made by concatenation (mistune's parsers): `"parse_" + name` spells
# the same dispatch name as `f"parse_{name}"`, so the table's values are the
# methods with that prefix, and a rule called through the table reaches them
# (never `_emit`, which has another prefix).
class Parser:
    RULES = ["heading", "quote"]

    def __init__(self):
        self._methods = {name: getattr(self, "parse_" + name) for name in self.RULES}

    def run_rule(self, name, text):
        func = self._methods[name]
        return func(text)

    def _emit(self, text):
        return text


class BlockParser(Parser):
    def parse_heading(self, text):
        return self._emit(text)

    def parse_quote(self, text):
        return self._emit(text)


p = BlockParser()
p.run_rule("heading", "# x")
p.run_rule("quote", "> y")
