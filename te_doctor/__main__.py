"""``python -m te_doctor``: the same entry point as the ``te-doctor`` console script."""

from __future__ import annotations

from te_doctor.cli.main import main

raise SystemExit(main())
