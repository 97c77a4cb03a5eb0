"""Pinned upstream source trees: lock files, fetching, a git-backed store."""
