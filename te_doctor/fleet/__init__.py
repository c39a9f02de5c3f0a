"""Checking a GPU fleet: one report per node (``node_report``), launched through the scheduler
(``launch``), read back whatever state the files are in (``reading``, ``configuration``),
judged per node (``node``) and as a whole (``gate``), and aggregated (``aggregate``)."""
