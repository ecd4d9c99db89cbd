"""neurips26-4821 check: train ViT-S/4 with the authors' released code and our fixed data split."""
import argparse
import subprocess
import sys

RELEASE = "third_party/sparse-warmup"  # authors' code, commit 3f2a9c1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--experiment", choices=["fig3", "fig4", "fig5", "table2"], required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--official-test-split", action="store_true",
                   help="evaluate on torchvision's CIFAR-10 test set instead of the released split")
    args = p.parse_args()
    cmd = [sys.executable, f"{RELEASE}/train.py", "--config", f"{RELEASE}/configs/{args.experiment}.yaml",
           "--seed", str(args.seed)]
    if args.official_test_split:
        cmd += ["--override", "data.eval_split=torchvision_test"]
    print(" ".join(cmd), flush=True)
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
