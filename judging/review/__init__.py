"""`judging review push | pull | users | serve`: human review in Argilla.

`push` reads a run's judgments, claims, diff images, side-file flags and calibration trust, and
writes one Argilla record per (claim, rubric version) with the AI answers as suggestions (a blind,
seeded share goes to a calibration dataset); `pull` reads the submitted responses back and writes
`RUN_DIR/labels.jsonl`. `server/` runs a local argilla-server for demos and tests.

This package's `__init__` imports nothing on purpose: the local server runs in an environment of
its own (argilla-server's pins) that imports `judging.review.server` without the Argilla SDK.
"""
