package chaos

// trainerSource is the trial every chaos experiment runs: a class-style
// trainable on the standard-library Python client (clients/python/hone.py,
// copied next to it). Each step sleeps step_s seconds and adds the
// configuration's x to its score; setup sleeps setup_s seconds first, so
// that a kill of hone often finds trials still starting (a trial that
// outlives hone then stays alive long enough to be seen). Every report
// carries the trainer's own iteration count ("step", restored from its
// checkpoint) and an id of the process ("run"), which the checks use to
// tell each row apart and to compare hone's training_iteration with what
// the trial restored. With CHAOS_FAIL_X set, the trial whose x equals it
// fails once at iteration CHAOS_FAIL_AT (a marker file in its trial
// directory remembers that it did).
const trainerSource = `import json
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hone  # noqa: E402


class Chaos(hone.Trainable):
    def setup(self, config):
        self.c = config
        self.run_id = secrets.token_hex(6)
        self.own = 0
        self.value = 0.0
        time.sleep(float(config.get("setup_s", 0)))

    def step(self):
        time.sleep(float(self.c.get("step_s", 0.05)))
        self.own += 1
        fail_x = os.environ.get("CHAOS_FAIL_X", "")
        if fail_x and str(self.c.get("x")) == fail_x and self.own == int(os.environ.get("CHAOS_FAIL_AT", "3")):
            marker = os.path.join(hone.trial_dir(), "chaos_failed_once")
            if not os.path.exists(marker):
                open(marker, "w").close()
                raise RuntimeError("deliberate failure at iteration %d" % self.own)
        self.value += float(self.c.get("x", 1))
        every = int(self.c.get("checkpoint_every", 1))
        return {
            "score": self.value,
            "step": self.own,
            "run": self.run_id,
            "should_checkpoint": every > 0 and self.own % every == 0,
            "done": self.own >= int(self.c.get("epochs", 9)),
        }

    def save(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
            json.dump({"step": self.own, "value": self.value}, f)

    def load(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json")) as f:
            s = json.load(f)
        self.own = int(s["step"])
        self.value = float(s["value"])


if __name__ == "__main__":
    Chaos.run()
`
