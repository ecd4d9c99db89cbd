"""`judging report`: the run directory as one human-readable HTML page.

Reads judgments (with their side-file flags), claims and diff images; writes `report.html`: a
summary table, then per claim the statement, the figures side by side, the signals and every
criterion's answer with its rationale or the reason it is unscored.
"""

from __future__ import annotations

from judging.report.html import outcome_label, summary_rows, write_html_report

__all__ = ["outcome_label", "summary_rows", "write_html_report"]
