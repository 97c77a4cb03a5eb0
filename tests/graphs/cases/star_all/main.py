from lib import *


def run():
    public()


run()
