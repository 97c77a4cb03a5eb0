# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def pad_left(s):
    return s

def pad_right(s):
    return s

def pad_both(s):
    return s

def width(s):
    return len(s)

def choose(strings, alignment):
    if alignment == "right":
        padfn = pad_left
    elif alignment == "center":
        padfn = pad_both
    else:
        padfn = pad_right
    return strings, padfn

def choose_width(wide):
    fn = width
    return 0, fn

def align(strings, alignment):
    strings, padfn = choose(strings, alignment)
    _, width_fn = choose_width(False)
    return [padfn(s) for s in strings if width_fn(s)]

align(["a"], "right")
align(["a"], "center")
align(["a"], "left")
