# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Worker:
    def step(self):
        pass

def drive(fn):
    fn()

w = Worker()
drive(w.step)
