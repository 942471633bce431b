"""Optuna baselines of the search-quality benchmark (bench/searchbench).

    python3 run.py serve   # runs: one JSON job per line in, one result per line out
    python3 run.py check   # values of the ported problems at given points

A job is {"problem", "method", "seed", "budget", "concurrency"}, method
"tpe-hyperband" or "tpe-sh". It runs Optuna's TPESampler (multivariate=True,
constant_liar=True when concurrency > 1, seed) with HyperbandPruner
(min_resource 1, max_resource = the problem's steps, reduction factor 3) or
SuccessiveHalvingPruner (min_resource 1, reduction factor 3, min early-stopping
rate 0) over the port of the problem in problems.py, with the budget
accounting and the simulated concurrency of the Go side (simulate in
simulate.go):

- at virtual time 0, `concurrency` trials are asked (study.ask, then each
  parameter suggested), one after the other, and the first step of each is
  scheduled;
- step u of a trial takes step_cost(u) of virtual time; the step that ends
  first (ties: the one scheduled first) is taken next;
- its value is counted against the budget (the run ends when the step would
  exceed it; trials in flight are dropped), then reported: at full fidelity
  study.tell(trial, value); below it trial.report(value, u) and
  trial.should_prune(), and a pruned trial is told PRUNED;
- a trial that goes on has its next step scheduled; one that ended frees its
  slot and a new trial is asked at once, at the same virtual time.

The result lists every counted step as [trial, step, value] in order, each
trial's configuration, and the CPU time (time.thread_time) spent inside
Optuna's calls (ask, suggest, report, should_prune, tell); the Go side
replays the steps through its own budget accounting. Output is JSON with
floats in their shortest exact form.
"""

import heapq
import json
import sys
import time
import warnings

import problems as P


def suggest(trial, dims):
    x = []
    for d in dims:
        if d.cats > 0:
            x.append(float(trial.suggest_categorical(d.name, list(range(d.cats)))))
        elif d.integer:
            x.append(float(trial.suggest_int(d.name, int(d.lo), int(d.hi))))
        else:
            x.append(trial.suggest_float(d.name, d.lo, d.hi))
    return x


def run_job(job, catalogue):
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    p = catalogue[job["problem"]]
    seed, budget, conc = int(job["seed"]), float(job["budget"]), int(job["concurrency"])
    method = job["method"]
    sampler = optuna.samplers.TPESampler(multivariate=True, constant_liar=conc > 1, seed=seed)
    if method == "tpe-hyperband":
        pruner = optuna.pruners.HyperbandPruner(min_resource=1, max_resource=p.steps, reduction_factor=3)
    elif method == "tpe-sh":
        pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3, min_early_stopping_rate=0)
    else:
        raise ValueError("unknown method %r" % method)
    study = optuna.create_study(direction="minimize", sampler=sampler, pruner=pruner,
                                study_name="%s-%s-%d" % (p.name, method, seed))

    cpu = 0.0
    spent = 0.0
    slack = 1e-9  # budgetSlack
    events, configs, trials = [], {}, {}
    queue, seq = [], 0
    wall0 = time.perf_counter()

    def schedule(now, t):
        nonlocal seq
        heapq.heappush(queue, (now + p.step_cost(t["run"].u + 1), seq, t))
        seq += 1

    def start(now):
        nonlocal cpu
        c0 = time.thread_time()
        tr = study.ask()
        x = suggest(tr, p.dims)
        cpu += time.thread_time() - c0
        n = tr.number
        configs[n] = x
        schedule(now, {"n": n, "trial": tr, "run": p.new_run(x, P.run_key(seed, "optuna-%d" % n))})

    for _ in range(conc):
        start(0.0)
    while queue:
        at, _, t = heapq.heappop(queue)
        v = t["run"].step()
        u = t["run"].u
        c = p.step_cost(u)
        if spent + c > budget + slack:
            break
        spent += c
        events.append([t["n"], u, v])
        trials[t["n"]] = True
        ended = False
        c0 = time.thread_time()
        if u >= p.steps:
            study.tell(t["trial"], v)
            ended = True
        else:
            t["trial"].report(v, u)
            if t["trial"].should_prune():
                study.tell(t["trial"], state=TrialState.PRUNED)
                ended = True
        cpu += time.thread_time() - c0
        if spent >= budget - slack:
            break
        if ended:
            start(at)
        else:
            schedule(at, t)
    return {
        "events": events,
        "configs": {str(n): configs[n] for n in trials},
        "trials": len(trials),
        "spent": spent,
        "cpu": cpu,
        "wall": time.perf_counter() - wall0,
    }


def serve():
    catalogue = P.problems()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = run_job(json.loads(line), catalogue)
        except Exception as e:  # reported to the Go side, which fails the run
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def check():
    """Reads [{"problem", "x", "key"}] and writes, per point, the values of
    a run at every step, the true value, the step costs and the optimum."""
    catalogue = P.problems()
    points = json.load(sys.stdin)
    out = []
    for pt in points:
        p = catalogue[pt["problem"]]
        run = p.new_run(pt["x"], int(pt["key"]))
        out.append({
            "values": [run.step() for _ in range(p.steps)],
            "true": p.true(pt["x"]),
            "costs": [p.step_cost(u) for u in range(1, p.steps + 1)],
            "optimum": p.optimum,
        })
    json.dump({"problems": sorted(catalogue), "points": out}, sys.stdout)


def version():
    import optuna

    print(optuna.__version__)


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "serve":
        serve()
    elif cmd == "check":
        check()
    elif cmd == "version":
        version()
    else:
        sys.exit("usage: run.py serve|check|version")
