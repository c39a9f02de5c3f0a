"""Command-line wiring: the command group and one module per command."""
