# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def warmup():
    pass

def other():
    pass

def run(step=warmup):
    step()

def handed(step=warmup):
    step()

def table(fn):
    fn()

class Base:
    def __init__(self, hook=warmup):
        hook()

class Child(Base):
    def __init__(self):
        super().__init__()

class Made:
    def __init__(self, hook=warmup):
        hook()

    @classmethod
    def make(cls):
        return cls()

def splat(step=warmup):
    step()

run(other)
run()
table(handed)
handed(other)
Base(other)
Child()
Made(other)
Made.make()
args = []
splat(*args)
splat(other)
