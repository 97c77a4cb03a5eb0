def helper():
    return 1


def other():
    return helper()
