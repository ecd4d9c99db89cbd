"""Typed errors: one class per failure a user can meet, each with a message that says what to do."""

from __future__ import annotations


class JudgingError(Exception):
    """Base class for every error this package raises on purpose."""


class RunStopped(JudgingError):
    """The run cannot go on at all (the judge refuses its credentials, measuring processes cannot
    start): it stops rather than record the same failure on every claim; a rerun resumes."""


class InputFileError(JudgingError):
    """A YAML/JSON file (manifest, registry, rubric) could not be read or validated.

    `location` is "file:line" when the line is known.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        """What is wrong, without where (for a caller that names the file itself)."""
        where = path or ""
        if line is not None:
            where += f":{line}"
        prefix = f"{where}: " if where else ""
        suffix = f" (field: {field})" if field else ""
        super().__init__(f"{prefix}{message}{suffix}")


class ManifestError(InputFileError):
    """A submission manifest is unreadable as a whole (not one bad claim: that is a ClaimProblem)."""


class RegistryError(InputFileError):
    """The organizers' claim registry is unreadable or invalid."""


class RubricError(InputFileError):
    """A rubric cannot be had as asked: no such id or version (or no rubrics folder), a file that
    does not validate, a published version edited in place, or not the text a run judged with.
    The one error of the one loader (`rubrics.RubricLibrary`)."""


class UnsafePathError(JudgingError):
    """A path in a submission escapes its folder (.., absolute path, or a symlink pointing outside)."""


class ImageLoadError(JudgingError):
    """An image could not be read: missing, corrupt, an unsupported format, or too large."""


class SourceError(JudgingError):
    """A submission source (folder or Hugging Face repo) could not be fetched or opened."""


class RunStoreError(JudgingError):
    """The run directory is unusable (e.g. it belongs to another tool or is not writable)."""


class ReviewError(JudgingError):
    """The review server is unreachable, refuses us, or holds a dataset we cannot use."""


class ReviewServerError(ReviewError):
    """The local review server could not be started, stopped or reached, or its environment is
    missing or holds another argilla-server version.

    `log_tail` holds the last lines of the server log when they explain the failure.
    """

    def __init__(self, message: str, *, log_tail: str | None = None):
        super().__init__(message)
        self.log_tail = log_tail


class CalibrationError(JudgingError):
    """Labels and judgments cannot be joined (another rubric hash, nothing in common...)."""


class PublishError(JudgingError):
    """The run cannot be published (not resolved, no token, the Hub refused or is unreachable)."""


class FigureDataError(InputFileError):
    """A figure-data file (the CSV or JSON of a figure's series) cannot be read: not found, too
    large, not CSV/JSON, or a value that is not a finite number."""
