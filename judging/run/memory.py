"""What one `judging run` may hold in memory, named in one place.

A run streams. Its claims are loaded submission by submission, judged, and written line by line;
every pass over the run's lines after judging (the counts in run.json, the consensus, the drift
report, the CLI's nothing-judged check) reads them one at a time from judgments.jsonl
(`RunStore.iter_latest`, `iter_latest_heads`, `iter_latest_as`), never as a list
(`RunStore.latest()` is for small runs and tests). What a run holds is of two kinds:

- **In flight**, bounded by `items_in_flight` whatever the size of the run: the work items started
  and not yet written, their claims' measurements and the prompt images LLM judges are shown
  (`InFlight`, dropped with a claim's last line), the lines of the panels whose members are not
  all written (`lines.Panels`), and one submission's batch being prepared.
- **For the whole run**, a few hundred bytes per line or claim: the store's indexes (each line's
  key and byte offset, each claim's offset and digest: what resuming and reading back by key
  need), the perceptual hash and shingle ids of each claim during the integrity check, and
  what the run writes at its end (the registry claims not addressed, the submissions loaded).
  The integrity pairs are not held, though they grow with the run (two a claim on the scale
  benchmark, whose submissions are five of one owner per paper): `IntegritySearch.pairs()` makes
  them one at a time and `rundir.write_integrity_pairs` writes each to integrity.json as it comes
  (the run keeps their counts); the consensus reads them back one at a time, keeping only the
  copies between registry claims, and hashes them as they are read; the flags of the side file
  are made from them one at a time.

Anything else kept per claim for the whole run is a leak of this bound: in issue 43 the drift
report sorted every judgment of the run in one list (about 17 KB a line, 446 MB at 5,000 claims),
and the integrity pairs were found, sorted and written as one report (about 3 KB a claim on the
scale benchmark). The bounds are named here, in one place, because every stage that streams has
to keep to them: `HELD_PER_CLAIM` is what a run may grow by per claim judged, and
`INTEGRITY_HELD_PER_CLAIM` what the integrity check may while it writes its pairs, both held by
tests/run/test_memory.py.
"""

from __future__ import annotations

#: Bytes of Python objects a run may grow by per claim judged (tracemalloc's peak, the store's
#: indexes included): a number claim's indexes and integrity entries measure about 2 KB; the two
#: passes of issue 43 that held every judgment measured 26 KB. Twice what is measured, for noise.
HELD_PER_CLAIM = 4096

#: Bytes of Python objects the integrity check may hold per claim while it finds and writes its
#: pairs (tracemalloc's peak), on submissions that make two duplicate-submission pairs a claim: a
#: claim's key and its place in its (owner, paper) group measure about 350 B; the pairs held in
#: one report before being written measured about 3 KB a claim.
INTEGRITY_HELD_PER_CLAIM = 1024

#: Work items in flight at the least: enough for the offline judge to keep the measuring pool
#: busy.
MIN_ITEMS_IN_FLIGHT = 64

#: Work items in flight per judge call allowed at once (--concurrency) and per measuring process:
#: the calls' window plus as many again waiting to be built, and a few claims queued per process,
#: so that the pool is never idle while calls wait.
ITEMS_PER_CALL = ITEMS_PER_WORKER = 4


def items_in_flight(concurrency: int, measuring_processes: int) -> int:
    """Work items started and not yet written (their claims, measurements and prompts are in
    memory): bounded, so that a run of 36k claims does not hold them all."""
    return max(MIN_ITEMS_IN_FLIGHT, ITEMS_PER_CALL * max(1, concurrency)
               + ITEMS_PER_WORKER * max(1, measuring_processes))
