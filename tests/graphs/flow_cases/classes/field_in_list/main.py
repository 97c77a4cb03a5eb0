# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Rule objects kept in a list, each holding its function in an attribute;
# the active functions are gathered into a cache and called through a variable
# (the shape of markdown_it's Ruler).
class Rule:
    def __init__(self, name, fn):
        self.name = name
        self.fn = fn


class Ruler:
    def __init__(self):
        self.rules = []
        self.cache = None

    def push(self, name, fn):
        self.rules.append(Rule(name, fn))

    def compile(self):
        self.cache = []
        for rule in self.rules:
            self.cache.append(rule.fn)
        return self.cache


def heading(state):
    return state


def paragraph(state):
    return state


ruler = Ruler()
ruler.push("heading", heading)
ruler.push("paragraph", paragraph)
for fn in ruler.compile():
    fn(1)
