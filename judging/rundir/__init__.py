"""The run directory, owned in one place: what files a run has (`layout`), the append-only store
of run.json, judgments, claims and fingerprints (`store`), the side files of flags computed
after judging, merged on read (`flags`: integrity and consensus), and the registry claims a
submission leaves unanswered (`not_addressed`), which claims a directory holds when it is one
shard of a run (`shards`: `judging run --shard I/N`, recorded in run.json; `merge` unions them),
`judging rerun`'s results (`reruns`), and the one reader of a judged run (`speaking`: per claim
and rubric version, the line that speaks for the AI). Every file names its schema version
(`layout.RUN_FILES`) and is upgraded on read from earlier ones.

Every stage reads and writes the run directory through this package; no other module spells a
run-directory file name.
"""

from __future__ import annotations

from judging.rundir.finals import iter_final_verdicts
from judging.rundir.flags import (
                                  drift_report,
                                  flags_by_claim,
                                  iter_integrity_pairs,
                                  judgments_with_flags,
                                  read_conflicts,
                                  read_consensus,
                                  read_drift,
                                  read_integrity,
                                  with_flags,
                                  write_conflicts,
                                  write_consensus,
                                  write_drift,
                                  write_integrity,
                                  write_integrity_pairs,
)
from judging.rundir.layout import (
                                  CALIBRATION_DIR,
                                  CALIBRATION_PLOTS,
                                  CALIBRATION_REPORT_JSON,
                                  CALIBRATION_REPORT_MD,
                                  CALIBRATION_RETEST_JSON,
                                  CALIBRATION_RETEST_MD,
                                  RERUN_LOG_FILES,
                                  RUN_FILES,
                                  CalibrationPaths,
                                  RunFile,
                                  RunPaths,
                                  claim_images,
)
from judging.rundir.not_addressed import read_not_addressed, write_not_addressed
from judging.rundir.reruns import append_rerun, read_reruns
from judging.rundir.shards import Shard, all_shards, shard_bucket
from judging.rundir.speaking import (
                                  PANEL_PREFIX,
                                  JudgedClaim,
                                  Spoken,
                                  choose_judgment,
                                  claim_chart_trace,
                                  is_panel,
                                  judged_claims,
                                  speaking_lines,
)
from judging.rundir.store import (
                                  Identity,
                                  Invocation,
                                  LineHead,
                                  LineKey,
                                  Merge,
                                  MergeInput,
                                  RunInfo,
                                  RunStore,
                                  UnreadableSource,
                                  append_jsonl,
                                  cut_torn_tail,
                                  identity,
                                  iter_jsonl,
                                  line_key,
                                  new_run_id,
                                  read_jsonl,
                                  read_judgments,
                                  utc_now,
)

__all__ = ["PANEL_PREFIX", "JudgedClaim", "Spoken", "choose_judgment", "claim_chart_trace",
           "is_panel",
           "judged_claims", "speaking_lines",
           "CALIBRATION_DIR", "CALIBRATION_PLOTS", "CALIBRATION_REPORT_JSON",
           "CALIBRATION_REPORT_MD", "CALIBRATION_RETEST_JSON", "CALIBRATION_RETEST_MD",
           "CalibrationPaths", "Identity", "Invocation", "LineHead", "LineKey", "Merge",
           "MergeInput", "RERUN_LOG_FILES", "RUN_FILES", "RunFile", "RunInfo", "RunPaths",
           "RunStore", "Shard", "UnreadableSource",
           "all_shards", "append_jsonl", "append_rerun", "claim_images", "cut_torn_tail",
           "drift_report", "flags_by_claim", "identity", "iter_final_verdicts", "iter_integrity_pairs",
           "iter_jsonl",
           "judgments_with_flags", "line_key", "new_run_id", "read_conflicts", "read_consensus",
           "read_drift", "read_integrity", "read_jsonl", "read_judgments", "read_not_addressed",
           "read_reruns", "shard_bucket", "utc_now", "with_flags", "write_conflicts",
           "write_consensus", "write_drift", "write_integrity", "write_integrity_pairs",
           "write_not_addressed"]
