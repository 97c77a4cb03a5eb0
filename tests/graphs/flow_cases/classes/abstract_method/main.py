# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# An abstract method of a class ABCMeta makes (an `abc.ABC` base, or a metaclass
# derived from ABCMeta) never runs on an object: a class that still has it cannot
# be instantiated, so every object's class replaces it (`kind = str` does too).
# Only `super().run()` reaches an abstract body.
import abc


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self): ...

    def describe(self):
        return self.area()


class Square(Shape):
    def area(self):
        return 4


class Meta(abc.ABCMeta):
    pass


class Codec(metaclass=Meta):
    @property
    @abc.abstractmethod
    def kind(self): ...

    def name(self):
        return self.kind(1)


class Json(Codec):
    kind = str


class Base(abc.ABC):
    @abc.abstractmethod
    def run(self):
        return "base"


class Impl(Base):
    def run(self):
        return super().run()


def main():
    Square().describe()
    Json().name()
    Impl().run()


main()
