"""Writes something that is not a result and exits 0."""

from _common import out_file

with open(out_file(), "w", encoding="utf-8") as handle:
    handle.write("{not json")
