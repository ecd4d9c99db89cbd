"""Intake (`judging run SOURCE...`, first step): what a submission is.

Reads submission folders (our `submission.yaml` manifest), Hugging Face sources (`hf://...`,
downloaded into the run directory's `sources/`; Spaces found by tag and pinned to the last commit
before a deadline, `discover`) and the organizers' claim registry (ours, or the ICML shape
`{paper_id: [{text}]}`); writes nothing but downloads. Gives validated `ClaimInput`s with every
path confined to its submission, registry references applied (a doctored copy is flagged), and
each bad claim as a `ClaimProblem` with its reason while the others go on.
"""

from __future__ import annotations

from judging.intake.discover import (
    DiscoveredSpace,
    PinnedCommit,
    PlannedSource,
    SourcePlan,
    commit_as_of,
    discover_spaces,
    parse_as_of,
    plan_sources,
)
from judging.intake.logbook import Logbook, StructuredAsk, is_logbook, load_logbook, read_logbook
from judging.intake.manifest import (
    MANIFEST_NAMES,
    LoadedSubmission,
    find_manifest,
    load_submission,
    manifest_json_schema,
)
from judging.intake.paths import (
    MAX_CONTROL_FILE_BYTES,
    MAX_ENV_FILE_BYTES,
    MAX_TEXT_FILE_BYTES,
    confine,
    confine_file,
    open_confined,
    read_confined,
)
from judging.intake.registry import (
    Registry,
    RegistryClaim,
    apply_registry,
    load_registry,
)
from judging.intake.shapes import SHAPES, Shape, load_folder, shape_for, shape_of
from judging.intake.sources import (
    HUB_PREFIX,
    DownloadLimits,
    HubSource,
    expand_source,
    fetch_hub_source,
    label_name,
    parse_hub_source,
    source_label,
)
from judging.intake.space import SpaceFiles, is_space, load_space, read_space

__all__ = ["HUB_PREFIX", "MANIFEST_NAMES", "MAX_CONTROL_FILE_BYTES", "MAX_ENV_FILE_BYTES",
           "MAX_TEXT_FILE_BYTES", "SHAPES", "Shape", "DiscoveredSpace", "DownloadLimits", "HubSource",
           "LoadedSubmission",
           "Logbook", "PinnedCommit", "PlannedSource", "Registry", "RegistryClaim", "SourcePlan",
           "SpaceFiles", "StructuredAsk", "apply_registry", "is_space", "load_space",
           "read_space",
           "commit_as_of", "confine", "confine_file", "discover_spaces", "expand_source",
           "fetch_hub_source", "find_manifest", "is_logbook", "load_folder", "load_logbook",
           "load_registry", "load_submission", "manifest_json_schema", "open_confined",
           "parse_as_of", "parse_hub_source",
           "label_name", "source_label", "plan_sources", "read_confined", "read_logbook",
           "shape_for", "shape_of"]

