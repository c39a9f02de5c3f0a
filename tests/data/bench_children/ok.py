"""All three components measured."""

from _common import component, write

write(finished=True, components=[component(n, 0.01) for n in ("gemms", "mlp", "layer")])
