# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A function written in a class body and called there while the class is built
# is a plain function at that call: its first parameter is the argument passed,
# not an instance of the class, so calls on it are not the class's methods.
class Step:
    def __init__(self, name):
        self.name = name

    def render(self):
        return "step " + self.name


class Pipeline:
    def make(step):
        return step.render()

    def label(level):
        return "level " + str(level)

    FIRST = make(Step("a"))
    LABELS = [label(1), label(2)]

    def render(self):
        return "pipeline"

    def __str__(self):
        return "Pipeline"


Pipeline().render()
