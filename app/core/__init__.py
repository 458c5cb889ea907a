"""Leaf helpers every room may import: error types, bounded JSON, file kinds,
terminal-safe text, lazy package attributes, the garbage collector's policy,
front matter, diffs and images. They import nothing else of opencode but each other."""
