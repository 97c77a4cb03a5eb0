# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A slice is a new list holding the selected slots, renumbered from 0.
def start():
    pass

def step():
    pass

def stop():
    pass

stages = [start, step, stop]
tail = stages[1:]
tail[1]()
window = stages[-2:-1]
window[0]()
