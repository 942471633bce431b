"""A port of the multi-objective problems of bench/mofunctions, for the Optuna
driver (mo_run.py).

Every problem computes what its Go original computes, with the same
operations in the same order where rounding could differ; `mo_run.py check`
prints the values for the Go test that compares the two. Standard library
only.
"""

import math

ZDT_VARS = 6
DTLZ2_K = 10
DTLZ2_M = 3
DTLZ2_MF_STEPS = DTLZ2_K


# --- functions (bench/mofunctions/problems.go) -------------------------------


def zdt_g(x):
    s = 0.0
    for v in x[1:]:
        s += v
    return 1 + 9 * s / float(len(x) - 1)


def zdt1(x):
    f1, g = x[0], zdt_g(x)
    return [f1, g * (1 - math.sqrt(f1 / g))]


def zdt2(x):
    f1, g = x[0], zdt_g(x)
    r = f1 / g
    return [f1, g * (1 - r * r)]


def zdt3(x):
    f1, g = x[0], zdt_g(x)
    r = f1 / g
    return [f1, g * (1 - math.sqrt(r) - r * math.sin(10 * math.pi * f1))]


def dtlz2_with(x, m, g):
    f = []
    for j in range(m):
        v = 1 + g
        for i in range(m - 1 - j):
            v *= math.cos(x[i] * math.pi / 2)
        if j > 0:
            v *= math.sin(x[m - 1 - j] * math.pi / 2)
        f.append(v)
    return f


def dtlz2(x, m):
    g = 0.0
    for v in x[m - 1:]:
        g += (v - 0.5) * (v - 0.5)
    return dtlz2_with(x, m, g)


def dtlz2_prefix(x, m, u):
    dist = x[m - 1:]
    k = len(dist)
    g = 0.0
    for v in dist[:u]:
        g += (v - 0.5) * (v - 0.5)
    if u < k:
        g *= float(k) / float(u)
    return dtlz2_with(x, m, g)


# --- problems (bench/mofunctions/problems.go, fronthv.go) --------------------

ZDT1_FRONT_HV = 1.1 * 1.1 - 1.0 / 3
ZDT2_FRONT_HV = 1.1 * 1.1 - 2.0 / 3
ZDT3_FRONT_HV = 1.3317628643
DTLZ2_FRONT_HV = 1.1 * 1.1 * 1.1 - math.pi / 6


class Problem:
    """A problem as mofunctions.Problem: dims (names, all in [0, 1]),
    objectives, steps, reference point, front hypervolume, at(x, u), cost(u)."""

    def __init__(self, name, nvars, objectives, steps, ref, front_hv, at, cost):
        self.name, self.objectives, self.steps = name, objectives, steps
        self.dims = ["x%d" % (i + 1) for i in range(nvars)]
        self.ref, self.front_hv, self._at, self._cost = ref, front_hv, at, cost

    def at(self, x, u):
        return self._at(x, min(max(u, 1), self.steps))

    def evaluate(self, x):
        return self._at(x, self.steps)

    def cost(self, u):
        if u <= 0:
            return 0.0
        return self._cost(min(u, self.steps))


def problems():
    ps = [
        Problem("zdt1", ZDT_VARS, 2, 1, [1.1, 1.1], ZDT1_FRONT_HV, lambda x, u: zdt1(x), lambda u: 1.0),
        Problem("zdt2", ZDT_VARS, 2, 1, [1.1, 1.1], ZDT2_FRONT_HV, lambda x, u: zdt2(x), lambda u: 1.0),
        Problem("zdt3", ZDT_VARS, 2, 1, [1.1, 1.1], ZDT3_FRONT_HV, lambda x, u: zdt3(x), lambda u: 1.0),
        Problem("dtlz2", DTLZ2_M + DTLZ2_K - 1, DTLZ2_M, 1, [1.1, 1.1, 1.1], DTLZ2_FRONT_HV,
                lambda x, u: dtlz2(x, DTLZ2_M), lambda u: 1.0),
        Problem("dtlz2-mf", DTLZ2_M + DTLZ2_K - 1, DTLZ2_M, DTLZ2_MF_STEPS, [1.1, 1.1, 1.1], DTLZ2_FRONT_HV,
                lambda x, u: dtlz2_prefix(x, DTLZ2_M, u), lambda u: float(u) / DTLZ2_MF_STEPS),
    ]
    return {p.name: p for p in ps}
