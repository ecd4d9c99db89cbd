"""judging: rubric-based, AI-then-human judging of claims reproduced from ML papers.

A file at the top of the package is vocabulary every stage uses; a folder is a stage, named after
its command, in the order the flow runs:

    intake/      submissions (manifest, Hub sources, tag discovery, deadline) and the registry -> claims
    check/       `judging check`: a submission's checklist (code, environment, results, logs, verdicts,
                 trace, personal data; an event's profile) before it is judged; writes nothing
    signals/     pure measures of a claim: pixel similarity, copies, numbers, chart reading
    judges/      async judges over one claim: offline (signals + rules), LLM, panels
    run/         `judging run`: load -> plan -> measure (a process pool, a content cache) -> judge
                 -> append to the run directory; `--shard I/N` judges one shard
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
                 MCP tools) over a run directory or a published dataset
    cli/         the command line, one module per command group

    rundir/      the run directory, owned in one place (file names, store, atomic writes, flags)

Vocabulary: `models` (claims, judgment lines, labels), `rubrics` (schema, aggregation, library and
lock), `rules` (named rule checks rubrics attach), `signal_catalogue` (every signal's name and
meaning), `figure_data` (a figure's data files: JSON or CSV series in data units), `errors`,
`hashing`, `version`, `_yaml`, `scrub` (personal-data patterns: publish replaces them, check
reports them), `figure_formats` (figure file formats, the SVG checks intake and signals share), `shards`
(which shard a claim key falls in), `pidfile` (the pid files of the review server and dashboard).
Layers: cli above the stages above rundir and the vocabulary; the import contracts in
pyproject.toml check it.
"""

__version__ = "0.1.0"
