"""Probes: each reads one part of the machine through a ``ProbeContext`` and never raises.

``te_doctor.probes.collect`` runs them all and assembles the Snapshot. This package file imports
nothing, so that choosing the interpreter to diagnose (``probes.target``, ``probes.real``) does
not load every probe first: the interpreter is asked while they load.
"""
