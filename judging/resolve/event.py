"""An event's rules that the leaderboard applies (`judging leaderboard --event FILE`, `judging app
--event FILE`): who a submission's participant is, and how many papers count per participant.

    # event.yaml
    name: NeurIPS 2026 hackathon
    max_papers_per_participant: 5
    participants:                 # optional: submission id or Hub namespace -> participant
      Neurips-2026-MLIntern-Repro/repro-2601.22449-lorenz96: chans

Without a file there is no limit, and a submission's participant is the namespace of its id (the
Hub owner of `owner/name`, or of `owner--name`, a Space's folder as the Hub's cache names it), or
the whole id when it has none.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from judging._yaml import raise_validation_error, read_document
from judging.errors import InputFileError
from judging.models import StrictModel


class EventRules(StrictModel):
    """The rules of one event, as configuration."""

    name: str | None = None
    max_papers_per_participant: int | None = Field(default=None, ge=1)
    """Papers beyond this many per participant are flagged and not counted in the participant's
    totals (the earliest submitted count; None: no limit)."""
    participants: dict[str, str] = Field(default_factory=dict)
    """A submission id, or a Hub namespace, -> its participant (org Spaces, teams, aliases)."""

    def participant(self, submission_id: str) -> str:
        """The map's entry for the submission or its namespace, else the namespace: the owner
        of `owner/name`, or of `owner--name` (a Space's folder as the Hub's cache names it; a
        repo id never holds "--"), else the whole id."""
        if submission_id in self.participants:
            return self.participants[submission_id]
        separator = "/" if "/" in submission_id else "--" if "--" in submission_id else None
        namespace = submission_id.split(separator, 1)[0] if separator else submission_id
        return self.participants.get(namespace, namespace)


def load_event_rules(path: Path | None) -> EventRules:
    """The rules in `path` (YAML); the defaults (no limit) when None. A bad file is one line
    naming the file and the field."""
    if path is None:
        return EventRules()
    doc = read_document(Path(path), error_class=InputFileError)
    if not isinstance(doc.data, dict):
        raise InputFileError("an event's rules are a mapping (name, max_papers_per_participant, "
                             "participants)", path=doc.path, line=1)
    try:
        return EventRules.model_validate(doc.data)
    except ValidationError as exc:
        raise_validation_error(exc, doc, error_class=InputFileError)
        raise  # unreachable: keeps type checkers content
