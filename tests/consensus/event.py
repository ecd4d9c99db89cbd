"""A generated test event for consensus: 4 registry claims of one paper, 5 submissions each.

- paper-9/c1 (number, 80.0 ± 0.5): all five verify; team5's value (86.0) is an outlier.
- paper-9/c2 (figure): four falsify it with a proof that runs; team5 verifies it (a verified
  verdict against a falsified consensus).
- paper-9/c3 (figure): all five verify; team2 hands in team1's figure, re-encoded (a copy: the
  two count once).
- paper-9/c4 (number, 70.0 ± 0.5): four verify; team5 falsifies it with a proof script whose log
  ends in a traceback (a false falsification), its value within the others' spread.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import yaml
from PIL import Image

from tests.conftest import SubmissionBuilder, render_chart

PAPER = "paper-9"
TEAMS = [f"team{n}/{PAPER}" for n in range(1, 6)]
C1, C2, C3, C4 = (f"{PAPER}/c{n}" for n in range(1, 5))

C1_VALUES = [80.1, 79.9, 80.2, 80.0, 86.0]
C4_VALUES = [70.2, 69.8, 70.1, 69.9, 69.0]
C2_VERDICTS = ["falsified", "falsified", "falsified", "falsified", "verified"]
C4_VERDICTS = ["verified", "verified", "verified", "verified", "falsified"]

OUTLIER = f"{TEAMS[4]}::{C1}"
CONTRADICTION = f"{TEAMS[4]}::{C2}"
COPY = f"{TEAMS[1]}::{C3}"
"""The copy that adds no support (team1's original speaks for both)."""
COPIED = f"{TEAMS[0]}::{C3}"
FALSE_FALSIFICATION = f"{TEAMS[4]}::{C4}"

TRACEBACK_LOG = """$ python proof_c4.py
loading checkpoint ckpt/final.pt
Traceback (most recent call last):
  File "proof_c4.py", line 12, in <module>
    acc = evaluate(model, loader)
  File "proof_c4.py", line 7, in evaluate
    return correct / total
ZeroDivisionError: division by zero
"""


def _jpeg(png: bytes) -> bytes:
    buffer = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def _figure(seed: int) -> bytes:
    """A chart of its own per seed (distinct shapes: no two are near-duplicates)."""
    x = np.linspace(0, 10, 200)
    shapes = [np.exp(-x / 3), np.sin(x) / 2 + 0.5, x / 10, (x - 5) ** 2 / 25, np.cos(x / 2) / 2,
              np.sqrt(x) / 3.2, np.exp(-((x - 3) ** 2)), 1 / (1 + x), np.abs(np.sin(2 * x)) / 2,
              np.tanh(x - 5) / 2 + 0.5, np.log1p(x) / 2.4]
    first = shapes[seed % len(shapes)]
    second = shapes[(seed * 3 + 1) % len(shapes)] * 0.8 + 0.1
    styles = ["default", "ggplot", "bmh", "classic", "seaborn-v0_8"]
    return render_chart(series={"a": (x, first), "b": (x, second)},
                        style=styles[seed % len(styles)], dpi=70)


def write_event(root: Path) -> tuple[Path, list[Path]]:
    """The registry and the five submission folders under `root`."""
    registry_dir = root / "registry"
    (registry_dir / "figures").mkdir(parents=True)
    published = {C2: _figure(100), C3: _figure(101)}
    for claim_id, png in published.items():
        (registry_dir / "figures" / f"{claim_id.split('/')[1]}.png").write_bytes(png)
    registry = registry_dir / "claims.yaml"
    registry.write_text(yaml.safe_dump({"claims": [
        {"claim_id": C1, "paper_id": PAPER, "source": "Table 1",
         "statement": "The model reaches 80.0% accuracy.", "reported_value": 80.0,
         "tolerance": {"absolute": 0.5}},
        {"claim_id": C2, "paper_id": PAPER, "source": "Figure 2",
         "statement": "Curve a stays above curve b.", "published_figure": "figures/c2.png"},
        {"claim_id": C3, "paper_id": PAPER, "source": "Figure 3",
         "statement": "Curve a falls below 0.2.", "published_figure": "figures/c3.png"},
        {"claim_id": C4, "paper_id": PAPER, "source": "Table 2",
         "statement": "The ablation reaches 70.0% accuracy.", "reported_value": 70.0,
         "tolerance": {"absolute": 0.5}},
    ]}, sort_keys=False))
    shared = _figure(7)
    folders = []
    for n, team in enumerate(TEAMS):
        sub = SubmissionBuilder(root / "subs" / f"team{n + 1}", team, PAPER)
        sub.header["agent"] = {"name": f"agent-{n + 1}", "model": "some-model"}
        sub.number_claim(C1, reported=80.0, reproduced=C1_VALUES[n],
                         log=f"final acc {C1_VALUES[n]}\n", justification=f"Run {n}: see logs.")
        proof = {}
        if C2_VERDICTS[n] == "falsified":
            proof = {"proof_script": sub.file("proof_c2.py", "print('a crosses b at step 4')\n"),
                     "problem_kind": "paper-error",
                     "logs": [sub.file("logs/proof_c2.txt", "a crosses b at step 4\n")]}
        sub.figure_claim(C2, published=published[C2], reproduced=_figure(10 + n),
                         verdict=C2_VERDICTS[n], justification=f"Team {n} on figure 2.",
                         evidence=proof or {"logs": []})
        own = shared if n == 0 else _jpeg(shared) if n == 1 else _figure(20 + n)
        sub.figure_claim(C3, published=published[C3], reproduced=own,
                         justification=f"Team {n} on figure 3.")
        proof = {}
        if C4_VERDICTS[n] == "falsified":
            proof = {"proof_script": sub.file("proof_c4.py", "print(1 / 0)\n"),
                     "problem_kind": "code-bug",
                     "logs": [sub.file("logs/proof_c4.txt", TRACEBACK_LOG)]}
        claim = sub.number_claim(C4, reported=70.0, reproduced=C4_VALUES[n],
                                 verdict=C4_VERDICTS[n], log=f"ablation acc {C4_VALUES[n]}\n",
                                 justification=f"Ablation run {n}.")
        if proof:
            claim["evidence"] = {"script": "run.py", **proof}
        folders.append(sub.write())
    return registry, folders
