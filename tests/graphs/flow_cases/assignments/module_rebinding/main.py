# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# At a module's top level, a call reaches the binding of its name in force
# there, as inside a function body.
def connect():
    pass

def reconnect():
    pass

def shutdown():
    pass

action = connect
action = reconnect
action()
if callable(shutdown):
    action = shutdown
action()
