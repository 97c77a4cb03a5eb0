# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A local rebound along a chain of wrappers (`text = wrap(text)`) and passed on:
# each call is given the bindings of the name that reach it, not every one, so
# each wrapper iterates only the generator handed to it there; `return out`
# likewise returns the binding that reaches the return.
def source_lines(rows):
    for row in rows:
        yield row

def upper(inner):
    for line in inner:
        yield line.upper()

def framed(inner):
    yield "["
    yield from inner
    yield "]"

def wrap(src):
    out = src
    out = framed(out)
    return out

def render(rows, flag):
    text = source_lines(rows)
    if flag:
        text = upper(text)
    text = wrap(text)
    return text

def main():
    for piece in render(["a", "b"], True):
        print(piece)
    for piece in render(["c"], False):
        print(piece)

main()
