"""Shards of a run: `judging run --shard I/N` judges the claims whose key falls in shard I of N.

The assignment depends on the claim key alone (`submission_id::claim_id`), through SHA-256, so it
is the same on every machine, in every process and in every Python version (the built-in
`hash()` of a string is salted per process). Shards are numbered 1..N, as `--shard` is written
by Playwright and Jest. A claim key always lands in exactly one shard: the union of the N shard
runs holds every claim once.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def shard_bucket(key: object, count: int) -> int:
    """The 0-based bucket of a claim key among `count` (str(key): a `ClaimKey` or its text)."""
    digest = hashlib.sha256(str(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


class Shard(BaseModel):
    """Shard `index` of `count` (1 <= index <= count)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _in_range(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index} of {self.count}: the index must be "
                             f"1..{self.count}")
        return self

    @classmethod
    def parse(cls, text: str) -> Shard:
        """"I/N" -> Shard(index=I, count=N); ValueError with the rule otherwise."""
        match = _SHARD.match(text)
        if match is None:
            raise ValueError(f"{text!r}: write the shard as I/N, e.g. 1/4 (shards are 1..N)")
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"{text!r}: the shard index must be 1..N and N at least 1")
        return cls(index=index, count=count)

    def holds(self, key: object) -> bool:
        """Whether this shard judges the claim with this key."""
        return shard_bucket(key, self.count) == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def dir_name(self) -> str:
        """A folder name for this shard's run directory (`--engine`): "2-of-4"."""
        return f"{self.index}-of-{self.count}"


def all_shards(count: int) -> list[Shard]:
    return [Shard(index=i, count=count) for i in range(1, count + 1)]
