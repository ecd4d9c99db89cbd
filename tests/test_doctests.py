"""The runnable examples in the metrics' docstrings (one per metric, the skimage.metrics pattern)
run as tests: an example that no longer gives what it shows fails here."""

from __future__ import annotations

import doctest
import importlib

import pytest

#: Modules whose public metrics each carry an Examples section.
DOCTESTED = ("judging.calibrate.metrics", "judging.signals.pixel")


@pytest.mark.parametrize("name", DOCTESTED)
def test_the_examples_in_the_docstrings_hold(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    examples = 0
    for test in finder.find(module, name):
        examples += len(test.examples)
        runner.run(test)
    outcome = runner.summarize(verbose=False)
    assert examples >= 5, f"{name} lost its examples"
    assert outcome.failed == 0, f"{outcome.failed} of {outcome.attempted} examples failed"


@pytest.mark.parametrize("name, metrics", [
    ("judging.calibrate.metrics", ("majority", "classification_metrics", "bootstrap_interval",
                                   "f1_interval", "krippendorff_alpha", "pairwise_kappa",
                                   "confidence_threshold", "reliability_bins")),
    ("judging.signals.pixel", ("ssim", "edge_f1", "palette_distance", "phash_distance",
                               "mean_abs_difference"))])
def test_every_metric_has_an_example(name: str, metrics: tuple[str, ...]) -> None:
    module = importlib.import_module(name)
    missing = [m for m in metrics if ">>>" not in (getattr(module, m).__doc__ or "")]
    assert missing == []
