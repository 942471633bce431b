"""Train a small network on two spirals: a class-style hone trial.

The same training as train.py, written as a ``hone.Trainable``: hone calls
``step`` once per epoch and can ask for a checkpoint at any moment (it
calls ``save``), so pausing the trial never loses an epoch. ``load`` restores
a checkpoint when hone restarts the trial.

Hyperparameters (all optional): lr, momentum, hidden, batch, epochs, seed,
and checkpoint_every, which here defaults to 0: hone decides when to save.
Run by hand, the script uses the defaults and prints its reports as
``HONE_REPORT`` lines.
"""

import math
import os
import sys
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

import hone  # noqa: E402
import spirals  # noqa: E402


class Spirals(hone.Trainable):
    """A two-spirals classifier trained one epoch per step."""

    def setup(self, config: Dict[str, Any]) -> None:
        """Build the data set and an untrained model for config."""
        self.s = spirals.settings(dict({"checkpoint_every": 0}, **config))
        (self.train_x, self.train_y), (self.val_x, self.val_y) = spirals.dataset()
        self.model = spirals.MLP(self.s["hidden"], self.s["seed"])

    def step(self) -> Dict[str, Any]:
        """Train one epoch and return the validation loss and accuracy."""
        s, model = self.s, self.model
        train_loss = model.train_epoch(self.train_x, self.train_y, s["lr"], s["momentum"], s["batch"])
        loss, accuracy = model.evaluate(self.val_x, self.val_y)
        if not (math.isfinite(train_loss) and math.isfinite(loss)):
            raise RuntimeError("training diverged at epoch %d (lr=%g)" % (model.epoch, s["lr"]))
        every = s["checkpoint_every"]
        return {
            "epoch": model.epoch,
            "loss": loss,
            "accuracy": accuracy,
            "train_loss": train_loss,
            "should_checkpoint": every > 0 and model.epoch % every == 0,
            "done": model.epoch >= s["epochs"],
        }

    def save(self, checkpoint_dir: str) -> None:
        """Write the model (weights, momentum, epoch) as JSON."""
        self.model.save(checkpoint_dir)

    def load(self, checkpoint_dir: str) -> None:
        """Restore the model written by save."""
        self.model.load(checkpoint_dir)


if __name__ == "__main__":
    Spirals.run()
