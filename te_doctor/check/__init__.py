"""``te-doctor check``: the pipeline from snapshot to report, and the gate."""
