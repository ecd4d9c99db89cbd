"""`judging calibrate` and `judging compare`: how far each AI judge agrees with people, with
itself, and with another judge, per criterion.

Reads a run's judgments and human labels (`labels.jsonl` from `review pull`), or any label table;
writes calibration artifacts (`calibration/artifacts/<rubric>@<version>/<judge>.json`, bound to
the judge model, the rubric hash, the prompt-template hash and what the endpoint served) and
reports (Markdown, JSON, plots). `--retest` re-judges lines with the answer cache bypassed
(`retest`: retests.jsonl) or reads two verdicts per item from a table; `compare` sets the run's
own verdicts beside another judge's (`reference`). Other stages ask it which criteria a judge is
trusted on (`trusted_criteria`) and for the pass rates corrected for the judge's errors
(`corrected_rates`). The metrics themselves are pure functions in `metrics`.
"""

from __future__ import annotations

from judging.calibrate import metrics
from judging.calibrate.artifacts import (
                                         NOT_CALIBRATED,
                                         CalibrationArtifact,
                                         CriterionCalibration,
                                         TrustOptions,
                                         calibration_root,
                                         check_label_hashes,
                                         latest_responses,
                                         load_artifact,
                                         read_labels,
                                         staleness,
                                         trusted_criteria,
)
from judging.calibrate.compare import compare_run
from judging.calibrate.metrics import majority
from judging.calibrate.report import write_table_report
from judging.calibrate.run import (
                                         CalibrationResult,
                                         CorrectedRow,
                                         calibrate_criterion,
                                         calibrate_run,
                                         corrected_rates,
                                         join,
)
from judging.calibrate.tables import TableReport, calibrate_table

__all__ = ["NOT_CALIBRATED", "CalibrationArtifact", "CalibrationResult", "CorrectedRow",
           "CriterionCalibration", "corrected_rates",
           "TableReport", "TrustOptions", "calibrate_criterion", "calibrate_run",
           "calibrate_table", "calibration_root", "check_label_hashes", "compare_run",
           "join", "latest_responses", "load_artifact", "majority", "metrics", "read_labels", "staleness",
           "trusted_criteria", "write_table_report"]
