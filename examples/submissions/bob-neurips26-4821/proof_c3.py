"""Proof for neurips26-4821/c3: the released evaluation split overlaps the training data.

The released `data.py` builds the "test" loader as `indices[45000:]` of a permutation of the
CIFAR-10 *training* set, but draws that permutation with `np.random.seed(seed)` while the training
subset uses `torch.randperm` with the same seed -- the two index sets are not complementary.
This script (1) counts the overlap, (2) evaluates the released checkpoint on the released split
and on the official test split. Output: logs/proof_c3.txt.
"""
import numpy as np
import torch
from torchvision import datasets, transforms

from third_party.sparse_warmup.data import released_split  # unmodified authors' function
from third_party.sparse_warmup.model import load_checkpoint

SEED = 0


def top1(model, ds):
    loader = torch.utils.data.DataLoader(ds, batch_size=512)
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.cuda()).argmax(-1).cpu() == y).sum().item()
            total += y.numel()
    return 100.0 * correct / total


def main():
    train_idx, eval_idx = released_split(n=50000, seed=SEED)
    overlap = np.intersect1d(train_idx, eval_idx)
    print(f"released eval split: {len(eval_idx)} images, {len(overlap)} also in the training subset "
          f"({100 * len(overlap) / len(eval_idx):.1f}%)")

    model = load_checkpoint("checkpoints/vit_s4_sparse_seed0.pt").cuda().eval()
    tf = transforms.ToTensor()
    full_train = datasets.CIFAR10("data", train=True, transform=tf)
    released_eval = torch.utils.data.Subset(full_train, eval_idx.tolist())
    official_test = datasets.CIFAR10("data", train=False, transform=tf)
    print(f"released eval split top1 {top1(model, released_eval):.2f}")
    print(f"official test split top1 {top1(model, official_test):.2f}")


if __name__ == "__main__":
    main()
