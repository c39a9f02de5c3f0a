"""te-doctor inside a test suite: a pytest plugin (loaded by pytest's ``pytest11`` entry point).

``@pytest.mark.te_doctor(require="fp8")`` skips a test, with te-doctor's reason, where that
execution path (or family) does not run; the session fixture ``te_path`` is the path
``te_doctor.select_path()`` chooses. Neither imports torch nor Transformer Engine.
"""
