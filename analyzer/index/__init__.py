"""Per-file facts (libcst), cached by content hash."""
