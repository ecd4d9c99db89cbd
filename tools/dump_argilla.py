"""Dump every dataset's records of an Argilla server (fields, suggestions, metadata) as JSON, to
compare the records two versions of the code push for the same run.

    python tools/dump_argilla.py URL API_KEY OUT.json
"""

from __future__ import annotations

import hashlib
import json
import sys

import argilla as rg


def plain(value):
    if hasattr(value, "tobytes") or type(value).__name__.endswith("ImageFile") or \
            type(value).__name__ == "Image":
        return "image:" + hashlib.sha256(value.tobytes()).hexdigest()[:16]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def main(url: str, key: str, out: str) -> None:
    client = rg.Argilla(api_url=url, api_key=key)
    dump = {}
    for dataset in client.datasets.list():
        records = {}
        for record in dataset.records(with_suggestions=True):
            records[str(record.id)] = {
                "fields": plain(dict(record.fields)),
                "metadata": plain(dict(record.metadata)),
                "suggestions": sorted([[s.question_name, plain(s.value), s.agent, s.score]
                                       for s in record.suggestions], key=str),
            }
        dump[dataset.name] = {"records": records,
                              "questions": [q.name for q in dataset.settings.questions],
                              "fields": [f.name for f in dataset.settings.fields]}
    with open(out, "w") as handle:
        json.dump(dump, handle, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:4])
