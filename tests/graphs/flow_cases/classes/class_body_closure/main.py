# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A class body runs inside its enclosing function and reads that function's
# names: a table handed to a class factory is what the class attribute holds.
def shout(x):
    return x.upper()


def whisper(x):
    return x.lower()


def make(handlers):
    class Speaker:
        HANDLERS = handlers

        def say(self, kind, text):
            return self.HANDLERS[kind](text)

    return Speaker


Loud = make({"loud": shout})
Quiet = make({"quiet": whisper})
Loud().say("loud", "a")
Quiet().say("quiet", "b")
