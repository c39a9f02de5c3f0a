"""Renderers turn a snapshot or a check report into text; they format and decide nothing."""
