"""A toy model with two objectives at odds: a function-style hone trial.

hone runs this script once per trial (``python3 examples/python/tradeoff.py``)
with the configuration in the environment. A wider and deeper "model" is
more accurate and slower: after every epoch the script reports accuracy
(to maximise), latency_ms (to minimise) and memory_mb (for a constraint),
all from closed-form functions of the configuration, so that a trial takes
a few milliseconds and the Pareto front is easy to read.

Hyperparameters (all optional): width, depth, lr, epochs. Run by hand, the
script uses the defaults and prints its reports as ``HONE_REPORT`` lines.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import hone  # noqa: E402


def main() -> None:
    """Report the toy model's metrics after each epoch."""
    cfg = hone.get_config()
    width = int(cfg.get("width", 32))
    depth = int(cfg.get("depth", 2))
    lr = float(cfg.get("lr", 0.01))
    epochs = int(cfg.get("epochs", 5))
    capacity = 1 - math.exp(-width * depth / 60.0)
    # The learning rate is best at 0.01, and worse by a factor per decade.
    fit = math.exp(-((math.log10(lr) + 2) ** 2) / 2)
    latency = 0.5 + 0.02 * width * depth
    memory = 4.0 * width * depth
    for epoch in range(1, epochs + 1):
        accuracy = 0.5 + 0.49 * capacity * fit * (1 - 0.5 ** epoch)
        metrics = {"epoch": epoch, "accuracy": accuracy, "latency_ms": latency, "memory_mb": memory}
        if hone.report(metrics, done=epoch == epochs) == "stop":
            return


if __name__ == "__main__":
    main()
