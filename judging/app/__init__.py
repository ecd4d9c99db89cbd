"""`judging app`: the organizers' Gradio dashboard over a run directory or a published dataset.

`data` reads what the dashboard shows (`load_run`: a run directory, decided live as `judging
resolve` decides it; `load_dataset`: a dataset written by `judging publish`, from the Hub);
`consensus` sets the reproductions of one registry claim side by side with the consensus
stage's verdict, support and spread; `queue` ranks the review queue as `judging review push`
does; `ui` builds the Blocks and the API (MCP tools with `mcp_server=True`); `process` serves it
in the foreground or detached with a pid file.
"""

from __future__ import annotations

from judging.app.consensus import ConsensusRow, ConsensusView, consensus_rows, consensus_view
from judging.app.data import AppData, ClaimRecord, load_dataset, load_dataset_folder, load_run
from judging.app.process import (
    DEFAULT_HOME,
    DEFAULT_HOST,
    DEFAULT_PORT,
    AppInfo,
    Source,
    launch,
    load,
    start_background,
    status,
    stop,
)

__all__ = ["DEFAULT_HOME", "DEFAULT_HOST", "DEFAULT_PORT", "AppData", "AppInfo", "ClaimRecord",
           "ConsensusRow", "ConsensusView", "Source", "consensus_rows", "consensus_view",
           "launch", "load", "load_dataset", "load_dataset_folder", "load_run",
           "start_background", "status", "stop"]
