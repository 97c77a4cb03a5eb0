def handler():
    pass


def only_first():
    pass
