"""The smoke test: run the real FP8 (and fallback) GEMMs in an isolated child process.

The te-doctor process never imports torch or TE: ``runner`` starts ``child.py`` (a standalone
script, so any interpreter can run it, even one without te-doctor installed) and ``result``
maps whatever happened (a result file, a signal, a timeout, junk) to ``SmokeFacts``.
"""
