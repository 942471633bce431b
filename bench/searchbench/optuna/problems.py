"""A port of the test problems of bench/functions, for the Optuna driver.

Every problem here computes what its Go original computes, with the same
operations in the same order where rounding could differ, and draws its
randomness (Hartmann's noise, counting ones' Bernoulli draws) from the same
SplitMix64 streams, so a configuration run with the same key reports the same
values; `run.py check` prints them for the Go test that compares the two.
Standard library only.
"""

import math

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


# --- randomness (bench/functions/rand.go) ---------------------------------


class Stream:
    """A SplitMix64 generator state."""

    def __init__(self, x):
        self.x = x & MASK

    def next(self):
        self.x = (self.x + GAMMA) & MASK
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return float(self.next() >> 11) / float(1 << 53)

    def normal(self):
        u1 = (float(self.next() >> 11) + 1) / float(1 << 53)
        u2 = self.uniform()
        return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def stream(key, *idx):
    x = key & MASK
    for i in idx:
        x ^= (i * 0xD1B54A32D192ED03) & MASK
        x = (x + GAMMA) & MASK
    return Stream(x)


def run_key(seed, name):
    """functions.Key: FNV-1a of name mixed with seed, through SplitMix64."""
    h = 14695981039346656037
    for b in name.encode():
        h ^= b
        h = (h * 1099511628211) & MASK
    return Stream(seed ^ h).next()


# --- dimensions -------------------------------------------------------------


class Dim:
    def __init__(self, name, lo, hi, integer=False, cats=0):
        self.name, self.lo, self.hi, self.integer, self.cats = name, lo, hi, integer, cats


def floats(names, lo=0.0, hi=1.0):
    return [Dim(n, lo, hi) for n in names]


def cat(name, n):
    return Dim(name, 0.0, float(n - 1), cats=n)


def mirror(dims, x):
    return [d.lo + d.hi - v for d, v in zip(dims, x)]


# --- Hartmann (bench/functions/hartmann.go) ---------------------------------

H_ALPHA = [1.0, 1.2, 3.0, 3.2]
H6_A = [
    [10, 3, 17, 3.5, 1.7, 8],
    [0.05, 10, 17, 0.1, 8, 14],
    [3, 3.5, 1.7, 10, 17, 8],
    [17, 8, 0.05, 10, 0.1, 14],
]
H6_P = [
    [1312, 1696, 5569, 124, 8283, 5886],
    [2329, 4135, 8307, 3736, 1004, 9991],
    [2348, 1451, 3522, 2883, 3047, 6650],
    [4047, 8828, 8732, 5743, 1091, 381],
]
H3_A = [[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]]
H3_P = [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
H_ZMAX = 100.0
H_STEPS = 27


def hartmann(A, P, bias, noise, x, z, eps):
    s = math.log(z) / math.log(H_ZMAX)
    total = 0.0
    for i in range(4):
        inner = 0.0
        for j in range(len(x)):
            d = x[j] - P[i][j] * 1e-4
            inner += A[i][j] * d * d
        total += (H_ALPHA[i] - bias * (1 - s)) * math.exp(-inner)
    return -total + abs(eps) * noise * (1 - s)


def hartmann_cost(z):
    r = z / H_ZMAX
    return 0.05 + 0.95 * r * r


# --- Branin (bench/functions/branin.go) -------------------------------------


def branin(x1, x2, s):
    b = 5.1 / (4 * math.pi * math.pi) - 0.01 * (1 - s)
    c = 5 / math.pi - 0.1 * (1 - s)
    t = 1 / (8 * math.pi) + 0.005 * (1 - s)
    d = x2 - b * x1 * x1 + c * x1 - 6
    return d * d + 10 * (1 - t) * math.cos(x1) + 10


def branin_cost(s):
    return 0.05 + 0.95 * math.pow(s, 1.5)


# --- Currin, Park, borehole (currin.go, park.go, borehole.go) ----------------


def currin(x1, x2):
    e = 1.0
    if x2 != 0:
        e = 1 - math.exp(-1 / (2 * x2))
    return e * (((2300 * x1 + 1900) * x1 + 2092) * x1 + 60) / (((100 * x1 + 500) * x1 + 4) * x1 + 20)


def currin_low(x1, x2):
    lo = max(0.0, x2 - 0.05)
    return 0.25 * (currin(x1 + 0.05, x2 + 0.05) + currin(x1 + 0.05, lo)) + 0.25 * (
        currin(x1 - 0.05, x2 + 0.05) + currin(x1 - 0.05, lo)
    )


CURRIN_MAX = 13.798722044728434


def park(x1, x2, x3, x4):
    return 0.5 * (math.sqrt(x1 * x1 + (x2 + x3 * x3) * x4) - x1) + (x1 + 3 * x4) * math.exp(1 + math.sin(x3))


def park_low(x1, x2, x3, x4):
    return (1 + math.sin(x1) / 10) * park(x1, x2, x3, x4) - 2 * x1 + x2 * x2 + x3 * x3 + 0.5


PARK_MAX = (math.sqrt(3) - 1) / 2 + 4 * math.exp(1 + math.sin(1))

BOREHOLE_DIMS = [
    Dim("rw", 0.05, 0.15),
    Dim("r", 100, 50000),
    Dim("Tu", 63070, 115600),
    Dim("Hu", 990, 1110),
    Dim("Tl", 63.1, 116),
    Dim("Hl", 700, 820),
    Dim("L", 1120, 1680),
    Dim("Kw", 9855, 12045),
]


def borehole(x):
    rw, r, tu, hu, tl, hl, l, kw = x
    lr = math.log(r / rw)
    return 2 * math.pi * tu * (hu - hl) / (lr * (1 + 2 * l * tu / (lr * rw * rw * kw) + tu / tl))


def borehole_low(x):
    rw, r, tu, hu, tl, hl, l, kw = x
    lr = math.log(r / rw)
    return 5 * tu * (hu - hl) / (lr * (1.5 + 2 * l * tu / (lr * rw * rw * kw) + tu / tl))


BOREHOLE_ARGMAX = [0.15, 100, 115600, 1110, 116, 700, 1120, 12045]

# --- sum of bumps (bumps.go) ------------------------------------------------

BUMPS = [  # centre, width, depth, preferred categories
    ([0.625, 0.897, 0.776, 0.225, 0.3, 0.874, 0 / 8.0, 7 / 8.0], 0.35, 1.0, 2, 1),
    ([0.797, 0.468, 0.303, 0.278, 0.255, 0.445, 4 / 8.0, 4 / 8.0], 0.3, 0.8, 0, 2),
    ([0.996, 0.793, 0.622, 0.989, 0.215, 0.16, 5 / 8.0, 0 / 8.0], 0.3, 0.7, 3, 0),
    ([0.036, 0.515, 0.466, 0.917, 0.629, 0.514, 4 / 8.0, 2 / 8.0], 0.3, 0.6, 1, 0),
    ([0.012, 0.192, 0.692, 0.201, 0.37, 0.004, 7 / 8.0, 1 / 8.0], 0.3, 0.5, 2, 1),
    ([0.268, 0.88, 0.51, 0.847, 0.64, 0.742, 1 / 8.0, 4 / 8.0], 0.3, 0.4, 1, 2),
]
BUMPS_DIMS = floats(["x0", "x1", "x2", "x3", "x4", "x5"]) + [
    Dim("k0", 0, 8, integer=True),
    Dim("k1", 0, 8, integer=True),
    cat("a", 4),
    cat("b", 3),
]
BUMPS_MIN = -1.0014899764439775


def bump_term(z, mu, sigma, w, a, b, ca, cb):
    d2 = 0.0
    for j in range(8):
        d = z[j] - mu[j]
        d2 += d * d
    v = w * math.exp(-d2 / (2 * sigma * sigma))
    if a != ca:
        v *= 0.5
    if b != cb:
        v *= 0.5
    return v


def bumps_sum(x, widen):
    z = list(x[:6]) + [x[6] / 8, x[7] / 8]
    a, b = int(x[8]), int(x[9])
    total = 0.0
    for mu, sigma, w, ca, cb in BUMPS:
        total += bump_term(z, mu, sigma * widen, w, a, b, ca, cb)
    return -total


def bumps_low(x, decoy):
    if not decoy:
        return bumps_sum(x, 1.5)
    z = list(x[:6]) + [x[6] / 8, x[7] / 8]
    a, b = int(x[8]), int(x[9])
    mu0, _, _, a0, b0 = BUMPS[0]
    mu = [1 - m for m in mu0]
    return bumps_sum(x, 1) - bump_term(z, mu, 0.6, 2.0, a, b, (a0 + 2) % 4, (b0 + 1) % 3)


# --- problems (registry.go) -------------------------------------------------


class Problem:
    """A problem as functions.Problem: dims, steps, fidelity, cost, runs."""

    def __init__(self, name, dims, steps, optimum, fidelity, cost, new_eval, true):
        self.name, self.dims, self.steps, self.optimum = name, dims, steps, optimum
        self.fidelity, self.cost_of, self.new_eval, self.true = fidelity, cost, new_eval, true

    def cost(self, u):
        if u <= 0:
            return 0.0
        return self.cost_of(self.fidelity(u)) / self.cost_of(self.fidelity(self.steps))

    def step_cost(self, u):
        return self.cost(u) - self.cost(u - 1)

    def new_run(self, x, key):
        return Run(self, list(x), key)


class Run:
    def __init__(self, p, x, key):
        self.p, self.x, self.key, self.u = p, x, key, 0
        self.ev = p.new_eval(self.x, key)

    def step(self):
        self.u += 1
        return self.ev(min(self.u, self.p.steps))


def hartmann_problem(name, A, P, bias, noise, optimum):
    n = len(A[0])
    dims = floats(["x%d" % i for i in range(n)])

    def fid(u):
        return H_ZMAX * u / H_STEPS

    def new_eval(x, key):
        def ev(u):
            return hartmann(A, P, bias, noise, x, fid(u), stream(key, u).normal())

        return ev

    return Problem(name, dims, H_STEPS, optimum, fid, hartmann_cost, new_eval,
                   lambda x: hartmann(A, P, bias, noise, x, H_ZMAX, 0.0))


def branin_problem():
    dims = [Dim("x1", -5.0, 10.0), Dim("x2", 0.0, 15.0)]

    def fid(u):
        return u / 27

    def new_eval(x, key):
        return lambda u: branin(x[0], x[1], fid(u))

    return Problem("branin", dims, 27, 0.397887, fid, branin_cost, new_eval, lambda x: branin(x[0], x[1], 1))


def counting_ones_problem(ncat, ncont):
    dims = [cat("c%d" % i, 2) for i in range(ncat)] + floats(["r%d" % i for i in range(ncont)])
    bmin, bmax = 9, 729
    steps = bmax // bmin

    def split(x):
        return [int(round(v)) for v in x[:ncat]], x[ncat:]

    def new_eval(x, key):
        cats, cont = split(x)
        state = {"drawn": 0, "succ": [0] * ncont}

        def ev(u):
            while state["drawn"] < u:
                state["drawn"] += 1
                for j, pj in enumerate(cont):
                    s = stream(key, state["drawn"], j)
                    for _ in range(bmin):
                        if s.uniform() < pj:
                            state["succ"][j] += 1
            total = 0.0
            for v in cats:
                total += float(v)
            b = bmin * state["drawn"]
            for k in state["succ"]:
                total += float(k) / float(b)
            return -total

        return ev

    def true(x):
        cats, cont = split(x)
        total = 0.0
        for v in cats:
            total += float(v)
        for v in cont:
            total += v
        return -total

    return Problem("countingones-%d+%d" % (ncat, ncont), dims, steps, -float(ncat + ncont),
                   lambda u: float(bmin * u), lambda b: b / bmax, new_eval, true)


def two_fidelity_problem(name, dims, optimum, high, zero):
    steps = 27

    def fid(u):
        return u / steps

    def new_eval(x, key):
        h, z = high(x), zero(x)

        def ev(u):
            if u >= steps:
                return h
            s = fid(u)
            return s * h + (1 - s) * z

        return ev

    return Problem(name, dims, steps, optimum, fid, branin_cost, new_eval, high)


def literature_problem(family, setting, dims, optimum, high, low):
    zero = low
    if setting == "mislead":
        zero = lambda x: low(mirror(dims, x))
    name = family if setting == "" else family + "-" + setting
    return two_fidelity_problem(name, dims, optimum, high, zero)


def problems():
    ps = [
        hartmann_problem("hartmann6", H6_A, H6_P, 0.5, 0.1, -3.32237),
        branin_problem(),
        counting_ones_problem(4, 4),
        counting_ones_problem(16, 16),
    ]
    for setting, bias, noise in [("", 0.5, 0.1), ("good", 2.5, 2), ("moderate", 3, 3), ("bad", 3.5, 4), ("terrible", 4, 5)]:
        name = "hartmann3" if setting == "" else "hartmann3-" + setting
        ps.append(hartmann_problem(name, H3_A, H3_P, bias, noise, -3.86278))
    for setting in ["", "mislead"]:
        ps.append(literature_problem("currin", setting, floats(["x1", "x2"]), -CURRIN_MAX,
                                     lambda x: -currin(x[0], x[1]), lambda x: -currin_low(x[0], x[1])))
    for setting in ["", "mislead"]:
        ps.append(literature_problem("park", setting, floats(["x1", "x2", "x3", "x4"]), -PARK_MAX,
                                     lambda x: -park(*x), lambda x: -park_low(*x)))
    for setting in ["", "mislead"]:
        ps.append(literature_problem("borehole", setting, BOREHOLE_DIMS, -borehole(BOREHOLE_ARGMAX),
                                     lambda x: -borehole(x), lambda x: -borehole_low(x)))
    ps.append(two_fidelity_problem("bumps", BUMPS_DIMS, BUMPS_MIN, lambda x: bumps_sum(x, 1),
                                   lambda x: bumps_low(x, False)))
    ps.append(two_fidelity_problem("bumps-decoy", BUMPS_DIMS, BUMPS_MIN, lambda x: bumps_sum(x, 1),
                                   lambda x: bumps_low(x, True)))
    return {p.name: p for p in ps}
