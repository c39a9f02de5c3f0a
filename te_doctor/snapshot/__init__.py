"""The facts record: the Snapshot model, its JSON codec and schema, file I/O and redaction."""
