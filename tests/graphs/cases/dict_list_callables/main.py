# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def relu(x):
    return x


def gelu(x):
    return x


def silu(x):
    return x


ACTIVATIONS = {"relu": relu, "gelu": gelu}


def act(name, x):
    return ACTIVATIONS[name](x)


def run_all(x):
    fns = [silu, relu]
    return fns[0](x)
