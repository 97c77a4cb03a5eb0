"""The concept catalogue: `mappings/*.toml` -> `ConceptMapping`, and `atlas map verify`.

Public API (used by `atlas report`): `load_mappings`, the dataclasses in `models`.
"""

from analyzer.mappings.load import default_mappings_dir, load_mapping_file, load_mappings
from analyzer.mappings.models import (
    REFERENCE,
    SIDES,
    STATUSES,
    UPSTREAMS,
    Bridge,
    ConceptMapping,
    Dispatch,
    KnobRef,
    MappingError,
    SideMapping,
    Step,
    StepSide,
    SymbolRef,
)

__all__ = [
    "REFERENCE",
    "SIDES",
    "STATUSES",
    "UPSTREAMS",
    "Bridge",
    "ConceptMapping",
    "Dispatch",
    "KnobRef",
    "MappingError",
    "SideMapping",
    "Step",
    "StepSide",
    "SymbolRef",
    "default_mappings_dir",
    "load_mapping_file",
    "load_mappings",
]
