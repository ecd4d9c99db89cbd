"""judging: rubric-based, AI-then-human judging of claims reproduced from ML papers.

A file at the top of the package is vocabulary every stage uses; a folder is a stage, named after
its command, in the order the flow runs:

    intake/      submissions (manifest, Trackio logbooks, free-form Spaces, Hub sources, tag
                 discovery, deadline) and the registry -> claims
    check/       `judging check`: a submission's checklist (code, environment, results, logs, verdicts,
                 trace, personal data; an event's profile) before it is judged; writes nothing
    signals/     pure measures of a claim: pixel similarity, copies, numbers, chart reading
    judges/      async judges over one claim: offline (signals + rules), LLM, panels
    run/         `judging run`: load -> plan -> measure (a process pool, a content cache) -> judge
                 -> append to the run directory; `--shard I/N` judges one shard
    rerun/       `judging rerun`: re-run the number claims' scripts in their declared environments
                 (uv), sandboxed (bubblewrap), locally, on Ray or on HF Jobs; compare the numbers
    merge/       `judging merge`: the append-only union of run directories (shards), conflicts
                 reported; engine.py runs the shards of a run on a Ray cluster
    report/      `judging report`: the run as one HTML page, or a paged report with an index
    review/      `judging review`: push to Argilla, pull human labels back; server/ runs one
    calibrate/   `judging calibrate`: LLM-human agreement per criterion, trust
    resolve/     `judging resolve | leaderboard`: final decisions per claim
    consensus/   `judging consensus`: the reproductions of one registry claim side by side, their
                 consensus verdict, support and spread; flags in a side file (never outcomes)
    publish/     `judging publish`: final decisions as a Hub dataset
    app/         `judging app`: the organizers' Gradio dashboard (leaderboard, claims, review queue,
                 MCP tools) over a run directory (followed as it changes) or a published dataset
    watch/       `judging watch`: a live event: polls the tagged Spaces, judges new Spaces and
                 revisions (never one twice), rewrites the decisions and the leaderboard
    cli/         the command line, one module per command group

    rundir/      the run directory, owned in one place (file names, store, atomic writes, flags,
                 which shard of a run a directory holds) and its one reader of a judged run (per
                 claim and rubric version, the line that speaks for the AI)
    figures/     figure files (formats, safe SVG rasterization) and figure data files: the shape
                 of a figure that intake and signals share
    services/    the background services' processes and pid files (review server, dashboard)
    traces/      the agent trace format (Claude-Code events) that intake, check and the signals
                 read, below them
    testing/     the fake OpenAI-compatible server, for tests and benchmarks only (no product
                 module imports it: an import contract)

Vocabulary: `models` (claims, judgment lines, labels), `rubrics` (schema, aggregation, library and
lock), `rules` (named rule checks rubrics attach), `signal_catalogue` (every signal's name and
meaning), `errors`, `hashing`, `version`, `atomic`, `_yaml`.
Layers: cli above the stages above rundir and the vocabulary; the import contracts in
pyproject.toml check it.
"""

__version__ = "0.1.0"
