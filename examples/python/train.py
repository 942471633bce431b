"""Train a small network on two spirals: a function-style hone trial.

hone runs this script once per trial (for example with the command
``python3 examples/python/train.py``) and passes the configuration in the
environment; the script reads it with ``hone.get_config()``, reports the
validation loss and accuracy after every epoch, and writes a checkpoint
every ``checkpoint_every`` epochs, from which hone can restart the trial.

Hyperparameters (all optional): lr, momentum, hidden, batch, epochs, seed,
checkpoint_every. Run by hand, the script uses the defaults and prints its
reports as ``HONE_REPORT`` lines.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

import hone  # noqa: E402
import spirals  # noqa: E402


def main() -> None:
    """Train for the configured number of epochs, or until hone says stop."""
    s = spirals.settings(hone.get_config())
    (train_x, train_y), (val_x, val_y) = spirals.dataset()
    model = spirals.MLP(s["hidden"], s["seed"])
    restore = hone.get_checkpoint()
    if restore:
        model.load(restore)  # sets model.epoch to the epoch it was saved at

    while model.epoch < s["epochs"]:
        train_loss = model.train_epoch(train_x, train_y, s["lr"], s["momentum"], s["batch"])
        loss, accuracy = model.evaluate(val_x, val_y)
        if not (math.isfinite(train_loss) and math.isfinite(loss)):
            # hone rejects non-finite metrics: a diverged trial fails instead.
            raise RuntimeError("training diverged at epoch %d (lr=%g)" % (model.epoch, s["lr"]))

        last = model.epoch == s["epochs"]
        ckpt = None
        every = s["checkpoint_every"]
        if last or (every > 0 and model.epoch % every == 0):
            ckpt = hone.checkpoint_dir()
            model.save(ckpt)

        metrics = {"epoch": model.epoch, "loss": loss, "accuracy": accuracy, "train_loss": train_loss}
        if hone.report(metrics, checkpoint_dir=ckpt, done=last) == "stop":
            return


if __name__ == "__main__":
    main()
