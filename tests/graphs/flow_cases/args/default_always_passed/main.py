# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def warmup():
    pass

def main_step():
    pass

def other():
    pass

def run(step=warmup):
    step()

class Worker:
    def __init__(self, hook=warmup):
        self.hook = hook

    def go(self, then=warmup):
        then()

class Tool:
    def use(self, then=warmup):
        then()

class Job:
    @staticmethod
    def start(fn=warmup):
        fn()

run(main_step)
run(step=other)
w = Worker(main_step)
w.hook()
w.go(other)
w.go(then=main_step)
t = Tool()
Tool.use(t, main_step)
Job.start(other)
