import pkg
from pkg import start

engine = start()
pkg.Engine().step()
