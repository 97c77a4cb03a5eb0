def handler():
    pass


def fallback():
    pass
