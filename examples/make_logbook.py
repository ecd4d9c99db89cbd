#!/usr/bin/env python
"""Regenerate the example Trackio logbook that `make demo` judges beside the example submissions.

    .venv/bin/python examples/make_logbook.py [--out DIR]     # DIR defaults to examples/

Writes `DIR/logbooks/dana-neurips26-4821/`, a published logbook as a participant's Space holds it
(README.md with the tags, logbook.json, pages/index.md, one folder per page), in trackio 0.43.0's
file format, written directly: the demo needs no trackio installed. Only `DIR/logbooks/` is owned
by this script (deleted and recreated on every run); examples/generate.py's `registry/` and
`submissions/` are not touched. The output is deterministic: fixed seeds, fixed timestamps and cell
ids, matplotlib's Agg backend with its bundled fonts, no PNG metadata, so two runs give
byte-identical files.

The logbook answers three claims of the registry's paper neurips26-4821:
- claim 1 (Figure 3, a figure claim): a PNG data-URI figure cell with its raw CSV, verdict VERIFIED;
- claim 3 (Table 2, a number claim): "The paper reports 94.1% ... we measured 93.9%", VERIFIED,
  with a run cell whose output holds `final top1 93.90`;
- claim 5 (Theorem 1): a reduced-scale check, TOY-VERIFIED (a toy claim, the scale note is read
  from the page).
The other registry claims of that paper (c2, c4, c6) are not addressed: the run records them.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
OWNED = "logbooks"
NAME = "dana-neurips26-4821"
SPACE_ID = "dana/neurips26-4821-logbook"
PAPER = "neurips26-4821"
TITLE = "Reproduction: Sparse Warmup Schedules for Transformers"
DAY = "2026-11-20"


def _generate_module():
    """examples/generate.py, for its figure data and rendering (same curves, same looks)."""
    spec = importlib.util.spec_from_file_location("examples_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class Page:
    """One page.md in trackio's cell grammar, with fixed ids and timestamps."""

    def __init__(self, slug: str, title: str, number: int) -> None:
        self.slug, self.title, self.number = slug, title, number
        self.parts = [f"# {title}\n"]
        self.count = 0

    def _header(self, kind: str, title: str, **meta: object) -> str:
        self.count += 1
        created = f"{DAY}T{9 + self.number:02d}:{self.count * 7:02d}:00+00:00"
        data = {"type": kind, "id": f"cell_{self.number:02d}{self.count:02d}dana0000",
                "created_at": created, "title": title, **meta}
        return f"\n\n---\n<!-- trackio-cell\n{json.dumps(data)}\n-->\n"

    def markdown(self, title: str, body: str, **meta: object) -> None:
        self.parts.append(self._header("markdown", title, **meta) + body.strip() + "\n")

    def run(self, argv: list[str], script: tuple[str, str], output: str, exit_code: int = 0,
            duration: float = 1.0) -> None:
        command = " ".join(argv)
        name, source = script
        self.parts.append(
            self._header("code", f"Run: {command} (exit {exit_code})", command=argv,
                         exit_code=exit_code, duration_s=duration)
            + f"````bash\n$ {command}\n````\n\nexit {exit_code} · {duration:.1f}s\n\n\n"
            + f"````python title={name}\n{source.strip()}\n\n````\n\n\n"
            + f"````output\n{output.strip()}\n\n````\n")

    def figure(self, title: str, png: bytes, raw: str, alt: str) -> None:
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        self.parts.append(
            self._header("figure", title)
            + f'````html\n<img src="{uri}" alt="{alt}" style="max-width:100%;height:auto;" />\n'
            + "````\n\n" + f"````raw\n{raw.strip()}\n````\n")

    def text(self) -> str:
        return "".join(self.parts)


def pages(gen) -> list[Page]:
    summary = Page("executive-summary", "Executive summary", 0)
    summary.markdown("Executive summary", f"""
Dana's agent reproduced three claims of *{gen.N_TITLE}* ({PAPER}) on one GPU.

| Claim | Verdict |
| --- | --- |
| [Claim 1: validation loss curve](#/claim-1-val-loss-curve) | VERIFIED |
| [Claim 3: top-1 accuracy](#/claim-3-top1) | VERIFIED |
| [Claim 5: Theorem 1](#/claim-5-theorem-1-toy) | TOY-VERIFIED |

### Scope & cost

| Item | Value |
| --- | --- |
| Compute | 1x A100 40GB, 6.5 GPU-hours |
| Scale | full CIFAR-10 for claims 1 and 3; 2 seeds at 1k steps for claim 5 (toy) |
""", pinned=True)

    # Claim 1: Figure 3, the same curves as the paper's up to run noise, in trackio's look.
    steps, series = gen.fig3_curves(noise_seed=301, noise=0.01)
    look = gen.Look(figsize=(6.4, 4.4), dpi=100,
                    rc={"font.family": "DejaVu Sans", "font.size": 10, "axes.grid": True,
                        "grid.alpha": 0.25, "lines.linewidth": 1.6},
                    title_prefix="Reproduced ")
    png = gen.render(look, gen.draw_fig3(steps, series, kstep=True), title="Figure 3")
    header = "step," + ",".join(series)
    rows = [f"{s}," + ",".join(f"{series[n][i]:.4f}" for n in series)
            for i, s in enumerate(steps)]
    val10k = float(series["val loss (sparse warmup)"][list(steps).index(10000)])
    c1 = Page("claim-1-val-loss-curve", "Claim 1: validation loss curve (Figure 3)", 1)
    c1.markdown("Claim", """
### Claim

> With sparse warmup, validation loss falls below 0.25 by step 10k and stays below the dense-warmup
> validation loss for the rest of training (Figure 3).
""")
    c1.run(["python", "train.py", "--schedule", "sparse", "--steps", "20000"],
           ("train.py", "# ViT-S/4 on CIFAR-10, sparse warmup (see the workspace)\n"
                        "import trainer\ntrainer.main()"),
           f"step 10000 val_loss {val10k:.3f}\nstep 20000 val_loss "
           f"{float(series['val loss (sparse warmup)'][-1]):.3f}\ndone", duration=14040.0)
    c1.figure("Figure 3 reproduced: loss vs step", png, header + "\n" + "\n".join(rows),
              alt="figure3")
    c1.markdown("Verdict", f"""
The curves we plotted have the shape of the paper's figure.
At step 10k the paper reports a sparse-warmup validation loss below 0.25; we measured {val10k:.3f}.
The sparse-warmup curve stays below the dense-warmup curve to step 20k.

**Verdict: VERIFIED**
""")

    c3 = Page("claim-3-top1", "Claim 3: top-1 accuracy (Table 2)", 3)
    c3.markdown("Claim", """
### Claim

> With sparse warmup, the small vision transformer reaches 94.1% top-1 accuracy on CIFAR-10
> (Table 2).
""")
    c3.run(["python", "eval.py", "--checkpoint", "runs/sparse/last.pt"],
           ("eval.py", "import trainer\nprint(f'final top1 {trainer.evaluate():.2f}')"),
           "loading runs/sparse/last.pt\nfinal top1 93.90", duration=41.5)
    c3.markdown("Result", """
The paper reports 94.1% top-1 and we measured 93.9% (`final top1 93.90` above), 0.2 points below,
within the run-to-run spread the paper gives.

**Verdict: VERIFIED**
""")

    c5 = Page("claim-5-theorem-1-toy", "Claim 5: Theorem 1 (toy check)", 5)
    c5.markdown("Claim", """
### Claim

> For L-smooth losses with bounded gradient variance, SGD with a sparse warmup density schedule
> satisfies the convergence bound of Theorem 1.
""")
    rng = np.random.default_rng(505)
    lhs = np.round(rng.uniform(0.020, 0.030, size=2), 4)
    c5.run(["python", "theorem1_check.py", "--seeds", "2", "--steps", "1000"],
           ("theorem1_check.py", "# estimate L and sigma^2, compare both sides of the bound"),
           "\n".join(f"seed {k} lhs {v:.4f} rhs 0.0410 holds" for k, v in enumerate(lhs)),
           duration=310.0)
    c5.markdown("Verdict", """
The bound holds in both seeds, but only within this toy scope (2 seeds, 1k steps, a 2-layer
model instead of ViT-S/4): a reduced-scale check, not the theorem at the paper's scale.

**TOY-VERIFIED**
""")
    return [summary, c1, c3, c5]


def write(out: Path) -> Path:
    gen = _generate_module()
    root = out / OWNED
    if root.exists():
        shutil.rmtree(root)
    book = root / NAME
    made = pages(gen)
    for page in made:
        path = book / "pages" / page.slug / "page.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page.text(), encoding="utf-8", newline="\n")
    index = [f"# {TITLE}", "", "## Pages", "", "| Page |", "| --- |"]
    index += [f"| [{p.title}](#/{p.slug}) |" for p in made]
    (book / "pages" / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8",
                                             newline="\n")
    tags = ["trackio-logbook", f"paper-{PAPER}"]
    manifest = {
        "schema_version": 2, "title": TITLE, "space_id": SPACE_ID,
        "paper": {"id": PAPER, "title": gen.N_TITLE}, "tags": tags,
        "updated_at": f"{DAY}T18:00:00+00:00",
        "root": {"slug": "index", "title": TITLE, "file": "pages/index.md",
                 "children": [{"slug": p.slug, "title": p.title,
                               "file": f"pages/{p.slug}/page.md", "children": []}
                              for p in made]},
        "traces": [],
    }
    (book / "logbook.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8",
                                       newline="\n")
    # YAML written by a YAML writer: the title holds ": ", which bare would not be YAML
    card = yaml.safe_dump({"title": TITLE, "sdk": "static", "tags": tags}, sort_keys=False,
                          allow_unicode=True, width=1000)
    readme = ("---\n" + card + "---\n\nGenerated by examples/make_logbook.py: an invented "
              "example logbook.\n")
    (book / "README.md").write_text(readme, encoding="utf-8", newline="\n")
    return book


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    print(write(args.out))


if __name__ == "__main__":
    main()
