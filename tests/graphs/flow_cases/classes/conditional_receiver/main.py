# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Plain:
    def render(self):
        pass


class Bold:
    def render(self):
        pass


class Italic:
    def render(self):
        pass


def both_arms(flag):
    style = Plain()
    if flag:
        style = Bold()
    else:
        style = Italic()
    style.render()


def one_arm(flag):
    style = Plain()
    if flag:
        style = Bold()
    style.render()


both_arms(True)
both_arms(False)
one_arm(True)
one_arm(False)
current = Plain()
if len(__name__) > 1:
    current = Bold()
else:
    current = Italic()
current.render()
