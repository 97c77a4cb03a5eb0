"""The diff tests reuse the fetched fake releases of the mapping tests."""

from mappings.conftest import fake_pins, pins  # noqa: F401  (fixtures)
