"""`judging check SOURCE...`: the checklist a submission form shows, before anything is judged.

Reads submissions through judging.intake's public face (our `submission.yaml`, or a Trackio
logbook; a folder of submissions, or `hf://...`, downloaded into a temporary folder that is
removed afterwards, as are a logbook's decoded figures and run logs); writes nothing. Gives per
submission a `Checklist`: code, environment, results, logs, verdict with its reason, agent
trace, scale note, a falsified claim's proof script and kind of problem, and personal data left
in the files (e-mail addresses, tokens and keys, home-directory paths, with file and line: the
patterns of `patterns`, which publish scrubs with, through this face). `profile="icml2026"` adds
that event's structure checks for logbooks. A `missing` item fails the check; a `warning` does not.
"""

from __future__ import annotations

from judging.check.model import MISSING, OK, STATUSES, WARNING, Checklist, CheckOutput, Item
from judging.check.patterns import SCRUB_KINDS, SCRUB_PATTERNS, find_personal_data, leftovers, scrub
from judging.check.stage import PROFILES, check_folder, check_source

__all__ = ["MISSING", "OK", "PROFILES", "SCRUB_KINDS", "SCRUB_PATTERNS", "STATUSES", "WARNING",
           "CheckOutput", "Checklist", "Item", "check_folder", "check_source", "find_personal_data", "leftovers",
           "scrub"]
