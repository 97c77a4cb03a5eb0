# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `per_site` inside methods: a method's text is indented, and each call still
# reaches only the bindings of its name that can reach it (function values and
# receivers alike).
def f1():
    pass

def f2():
    pass

class Proxy:
    def unwrap(self):
        return 1

class Item:
    def unwrap(self):
        return 2

class Runner:
    def straight(self):
        x = f1
        x()
        x = f2

    def receivers(self, flag):
        if flag:
            value = Proxy()
        else:
            value = Item()
        return value.unwrap()

    def last_wins(self):
        obj = Proxy()
        obj = Item()
        return obj.unwrap()

r = Runner()
r.straight()
r.receivers(True)
r.receivers(False)
r.last_wins()
