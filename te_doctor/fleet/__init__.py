"""Checking a GPU fleet: one report per node (``node_report``), launched through the scheduler
(``launch``), read back whatever state the files are in (``reading``) and aggregated into a
verdict a reservation can be gated on (``aggregate``)."""
