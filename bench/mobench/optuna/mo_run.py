"""Optuna baselines of the multi-objective benchmark (bench/mobench).

    python3 mo_run.py run PROBLEM METHOD SEED TRIALS  # one study, JSON lines out
    python3 mo_run.py check                           # values of the ported problems
    python3 mo_run.py hv                              # Optuna's hypervolume of given sets
    python3 mo_run.py version                         # Optuna's version

`run` optimises the port of PROBLEM (mo_problems.py) at full fidelity with
Optuna's multi-objective study, create_study(directions=["minimize", ...]),
and METHOD's sampler, seeded with SEED:

- "nsga2": NSGAIISampler(seed=SEED), its defaults otherwise (population 50,
  crossover UniformCrossover, mutation 1/n per parameter);
- "motpe": TPESampler(seed=SEED, multivariate=True), which is Optuna's
  multi-objective TPE (Ozaki et al. 2020) when the study has several
  directions; multivariate as in the single-objective driver
  (bench/searchbench/optuna/run.py).

It runs TRIALS trials one after the other (ask, each parameter suggested as a
float in [0, 1], evaluate, tell) and prints one JSON line per trial,
{"trial": n, "x": [...], "values": [...]}, then a last line {"trials": n,
"cpu": seconds}: the CPU time (time.thread_time) spent inside Optuna's
calls (ask, suggest, tell), not in the problem. Floats are printed in their
shortest exact form.
"""

import json
import sys
import time
import warnings

import mo_problems as P


def run(problem, method, seed, trials):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    p = P.problems()[problem]
    if method == "nsga2":
        sampler = optuna.samplers.NSGAIISampler(seed=seed)
    elif method == "motpe":
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True)
    else:
        raise ValueError("unknown method %r" % method)
    study = optuna.create_study(directions=["minimize"] * p.objectives, sampler=sampler,
                                study_name="%s-%s-%d" % (p.name, method, seed))
    cpu = 0.0
    out = sys.stdout
    for _ in range(trials):
        c0 = time.thread_time()
        tr = study.ask()
        x = [tr.suggest_float(d, 0.0, 1.0) for d in p.dims]
        cpu += time.thread_time() - c0
        values = p.evaluate(x)
        c0 = time.thread_time()
        study.tell(tr, values)
        cpu += time.thread_time() - c0
        out.write(json.dumps({"trial": tr.number, "x": x, "values": values}, separators=(",", ":")) + "\n")
    out.write(json.dumps({"trials": trials, "cpu": cpu}) + "\n")
    out.flush()


def check():
    """Reads [{"problem", "x"}] and writes, per point, the objective vectors
    at every step and the step costs, and per problem its reference point,
    front hypervolume, objectives and steps."""
    catalogue = P.problems()
    points = json.load(sys.stdin)
    out = []
    for pt in points:
        p = catalogue[pt["problem"]]
        out.append({
            "values": [p.at(pt["x"], u) for u in range(1, p.steps + 1)],
            "costs": [p.cost(u) for u in range(1, p.steps + 1)],
        })
    info = {name: {"ref": p.ref, "front_hv": p.front_hv, "objectives": p.objectives, "steps": p.steps,
                   "dims": p.dims} for name, p in catalogue.items()}
    json.dump({"problems": info, "points": out}, sys.stdout)


def hv():
    """Reads [{"points", "ref"}] and writes the hypervolume of each set by
    Optuna's WFG, of the points strictly below ref in every coordinate (the
    others add nothing; Optuna refuses points beyond ref)."""
    import numpy as np
    from optuna._hypervolume import WFG

    out = []
    for s in json.load(sys.stdin):
        ref = np.array(s["ref"], dtype=float)
        pts = [p for p in s["points"] if all(v < r for v, r in zip(p, s["ref"]))]
        out.append(float(WFG().compute(np.array(pts, dtype=float), ref)) if pts else 0.0)
    json.dump(out, sys.stdout)


def version():
    import optuna

    print(optuna.__version__)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "run" and len(sys.argv) == 6:
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "check":
        check()
    elif cmd == "hv":
        hv()
    elif cmd == "version":
        version()
    else:
        sys.exit("usage: mo_run.py run PROBLEM METHOD SEED TRIALS | check | hv | version")
