"""A small neural network on a two-spirals data set, in pure Python.

Shared by train.py (function style) and train_class.py (class style). The
data set is hard enough for the learning rate, the momentum and the width of
the network to matter, and small enough for one epoch to take a few tens of
milliseconds without NumPy.
"""

import json
import math
import os
import random
from typing import Any, Dict, List, Tuple

Point = Tuple[float, float]

#: The file a checkpoint directory holds.
CHECKPOINT_FILE = "model.json"


def spirals(n: int, noise: float, seed: int) -> Tuple[List[Point], List[int]]:
    """Return n points of two interleaved spirals and their classes (0 or 1)."""
    rng = random.Random(seed)
    xs: List[Point] = []
    ys: List[int] = []
    for i in range(n):
        label = i % 2
        t = rng.random() * 3.0 * math.pi
        radius = 0.1 + t / (3.0 * math.pi)
        angle = t + label * math.pi
        xs.append(
            (
                radius * math.cos(angle) + rng.gauss(0.0, noise),
                radius * math.sin(angle) + rng.gauss(0.0, noise),
            )
        )
        ys.append(label)
    return xs, ys


def dataset() -> Tuple[Tuple[List[Point], List[int]], Tuple[List[Point], List[int]]]:
    """Return the (training, validation) sets, the same for every trial."""
    return spirals(2000, 0.05, seed=1), spirals(500, 0.05, seed=2)


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _bce(p: float, y: int) -> float:
    """Binary cross-entropy of predicting p for class y."""
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return -math.log(p) if y == 1 else -math.log(1.0 - p)


class MLP:
    """One hidden tanh layer and a sigmoid output, trained by minibatch SGD
    with momentum.

    ``epoch`` counts the epochs trained so far.
    """

    def __init__(self, hidden: int, seed: int) -> None:
        rng = random.Random(seed)
        self.hidden = hidden
        self.seed = seed
        self.epoch = 0
        self.w1 = [[rng.gauss(0.0, 2.0), rng.gauss(0.0, 2.0)] for _ in range(hidden)]
        self.b1 = [rng.gauss(0.0, 0.5) for _ in range(hidden)]
        self.w2 = [rng.gauss(0.0, 1.0 / math.sqrt(hidden)) for _ in range(hidden)]
        self.b2 = 0.0
        # Momentum buffers, one per parameter.
        self.vw1 = [[0.0, 0.0] for _ in range(hidden)]
        self.vb1 = [0.0] * hidden
        self.vw2 = [0.0] * hidden
        self.vb2 = 0.0

    def predict(self, x: Point) -> float:
        """Return the probability that x is of class 1."""
        x0, x1 = x
        z = self.b2
        for (a, b), c, w in zip(self.w1, self.b1, self.w2):
            z += w * math.tanh(a * x0 + b * x1 + c)
        return _sigmoid(z)

    def train_epoch(self, xs: List[Point], ys: List[int], lr: float, momentum: float, batch: int) -> float:
        """Train one epoch over (xs, ys) and return the mean training loss."""
        order = list(range(len(xs)))
        random.Random(self.seed * 1000003 + self.epoch).shuffle(order)
        hidden = range(self.hidden)
        total = 0.0
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            gw1 = [[0.0, 0.0] for _ in hidden]
            gb1 = [0.0] * self.hidden
            gw2 = [0.0] * self.hidden
            gb2 = 0.0
            for i in chunk:
                x0, x1 = xs[i]
                h = [math.tanh(a * x0 + b * x1 + c) for (a, b), c in zip(self.w1, self.b1)]
                z = self.b2
                for w, hj in zip(self.w2, h):
                    z += w * hj
                p = _sigmoid(z)
                total += _bce(p, ys[i])
                dz = p - ys[i]
                gb2 += dz
                for j in hidden:
                    hj = h[j]
                    gw2[j] += dz * hj
                    dh = dz * self.w2[j] * (1.0 - hj * hj)
                    g = gw1[j]
                    g[0] += dh * x0
                    g[1] += dh * x1
                    gb1[j] += dh
            step = lr / len(chunk)
            for j in hidden:
                vj, gj, wj = self.vw1[j], gw1[j], self.w1[j]
                vj[0] = momentum * vj[0] - step * gj[0]
                vj[1] = momentum * vj[1] - step * gj[1]
                wj[0] += vj[0]
                wj[1] += vj[1]
                self.vb1[j] = momentum * self.vb1[j] - step * gb1[j]
                self.b1[j] += self.vb1[j]
                self.vw2[j] = momentum * self.vw2[j] - step * gw2[j]
                self.w2[j] += self.vw2[j]
            self.vb2 = momentum * self.vb2 - step * gb2
            self.b2 += self.vb2
        self.epoch += 1
        return total / len(xs)

    def evaluate(self, xs: List[Point], ys: List[int]) -> Tuple[float, float]:
        """Return the mean loss and the accuracy on (xs, ys)."""
        loss = 0.0
        correct = 0
        for x, y in zip(xs, ys):
            p = self.predict(x)
            loss += _bce(p, y)
            correct += (p >= 0.5) == (y == 1)
        return loss / len(xs), correct / len(xs)

    def state(self) -> Dict[str, Any]:
        """Return the model's state as a JSON-ready dict."""
        return {
            "hidden": self.hidden,
            "seed": self.seed,
            "epoch": self.epoch,
            "w1": self.w1,
            "b1": self.b1,
            "w2": self.w2,
            "b2": self.b2,
            "vw1": self.vw1,
            "vb1": self.vb1,
            "vw2": self.vw2,
            "vb2": self.vb2,
        }

    def save(self, directory: str) -> None:
        """Write the model into directory as model.json."""
        path = os.path.join(directory, CHECKPOINT_FILE)
        with open(path, "w") as f:
            json.dump(self.state(), f)
            f.flush()
            os.fsync(f.fileno())

    def load(self, directory: str) -> None:
        """Restore the model from a directory written by save."""
        with open(os.path.join(directory, CHECKPOINT_FILE)) as f:
            state = json.load(f)
        if state["hidden"] != self.hidden:
            raise ValueError("checkpoint has %d hidden units, the configuration %d" % (state["hidden"], self.hidden))
        for key in ("seed", "epoch", "w1", "b1", "w2", "b2", "vw1", "vb1", "vw2", "vb2"):
            setattr(self, key, state[key])


def settings(config: Dict[str, Any]) -> Dict[str, Any]:
    """Return the hyperparameters from a trial's configuration, with defaults
    for those it leaves out (all of them when the script runs by hand)."""
    return {
        "lr": float(config.get("lr", 0.3)),
        "momentum": float(config.get("momentum", 0.9)),
        "hidden": int(config.get("hidden", 16)),
        "batch": int(config.get("batch", 16)),
        "epochs": int(config.get("epochs", 20)),
        "seed": int(config.get("seed", 0)),
        "checkpoint_every": int(config.get("checkpoint_every", 5)),
    }
