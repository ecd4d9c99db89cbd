"""`judging consensus`: every reproduction of one registry claim side by side.

Reads the run directory's claims, judgments and integrity pairs; writes the consensus side file
(consensus.json: per registry claim, its reproductions with their values, verdicts and outcomes,
the consensus verdict, its support and the spread of values), whose flags
(`contradicts_consensus`, `value_outlier`, `not_independent`) are merged into judgments on read.
Consensus raises review priority and informs people; it never changes an outcome by itself.
"""

from __future__ import annotations

from judging.consensus.build import (
                                     compute_consensus,
                                     is_current,
                                     load_consensus,
                                     note_reproduction,
                                     run_consensus,
)
from judging.consensus.rules import consensus_verdict, modified_z, value_scale

__all__ = ["compute_consensus", "consensus_verdict", "is_current", "load_consensus",
           "modified_z", "note_reproduction", "run_consensus", "value_scale"]
