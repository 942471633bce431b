// Package searchbench is the search-quality benchmark (docs/QUALITY.md,
// written by cmd/searchbench): it runs hone's searchers and schedulers,
// and baselines from Goptuna v0.9.0 and Optuna beside them, on the
// multi-fidelity problems of package functions, at 1, 4 and 16 trials at
// once, at equal total budget, over several seeds, and reports regret
// against budget, the budget each method needs to reach random search's
// final regret, parallel efficiency and the searchers' CPU time.
//
// # Methods
//
// hone's methods are one table, HoneMethods: a name and how its searcher
// and scheduler are built (Env: the space, the seed, the concurrency, the
// metric and time attribute, max_t and η); adding a method is adding a
// line. Two of them are baselines, random search (FIFO, every trial to
// full fidelity) and random search with ASHA; the others are hone's own:
// synchronous HyperBand with random search, BOHB (HyperBand for BOHB and
// the BOHB searcher) and TPE (FIFO, behind search.Limit at the
// concurrency). ExternalMethods are the other baselines: Goptuna's TPE
// sampler alone and with its successive-halving pruner, and Optuna's
// TPESampler (multivariate, constant liar when concurrency > 1) with its
// HyperbandPruner and its SuccessiveHalvingPruner. Every multi-fidelity
// method uses η = 3 and the problem's budget steps 1..Steps.
//
// # How a problem runs on hone
//
// Every hone method runs through runner.Run on the sim executor, with
// MaxConcurrentTrials and the pool's CPUs set to the concurrency. A
// trial's trainable evaluates its configuration one budget step at a
// time: step u reports "loss" = f(x, Fidelity(u)), "budget" = u (the time
// attribute of HyperBand, ASHA and BOHB) and "cost" = the cost increment
// of the step, and the step takes that cost as virtual time (one unit of
// cost is one virtual hour). A trial that is paused and resumed continues
// from its checkpoint, so reaching step u costs Cost(u) however often the
// trial was paused. The schedulers thus see a learning curve whose value
// at budget u is the function at that fidelity.
//
// # How the other libraries run
//
// Goptuna (in process) and Optuna (a Python driver, optuna/run.py, over a
// port of the problems, optuna/problems.py, that a test checks against
// the Go functions to 1e-9) are driven trial by trial (ask, report,
// tell) on a virtual clock that mirrors the sim executor (simulate): at
// time 0 concurrency trials are asked; step u of a trial takes
// StepCost(u) of virtual time and the step that ends first (ties: the one
// scheduled first) is taken next; its value is counted against the
// budget, then reported (the pruner may stop the trial below full
// fidelity; at full fidelity the trial is told complete); a trial that
// ended frees its slot and a new one is asked at once, at the same
// virtual time. Optuna's steps are replayed through the Go budget
// accounting, which must agree with the driver's. Optuna is Debian's
// python3-optuna, run with /usr/bin/python3; EnsureOptuna installs it
// with apt-get when it is missing and the process runs as root, and the
// Optuna methods are left out, loudly, when it cannot.
//
// # Budget and regret
//
// Cost is normalised so that one evaluation at full fidelity costs 1; the
// budget of a run is a number of full-fidelity evaluations' worth of
// cost, the same for every method at every concurrency. Each run ends
// when the sum of the cost of the steps it reported would exceed the
// budget; a step that would exceed it is not counted, and trials still
// running are cut. Only evaluations at full fidelity count as found (the
// incumbent at the highest budget, as in the BOHB paper): the incumbent
// is the full-fidelity evaluation with the lowest reported value, and the
// regret is its noise-free full-fidelity value minus the optimum (for
// counting ones the expected value). A cell is a problem at a
// concurrency; per cell and method the report gives the median and
// quartiles of the final regret over seeds, the median regret curve, and
// the budget at which that curve first reaches random search's median
// final regret in the cell. Parallel efficiency compares, per method, the
// budget needed at each concurrency to reach random search's median final
// regret at concurrency 1.
//
// # Larger runs
//
// A second part runs random search and hone's own methods again with a
// budget of ScaleSteps (8,100) steps per run, at concurrency 1 and the
// highest (in the default mode with 10 seeds: long runs vary less between
// seeds than short ones), and reports parallel efficiency and searcher CPU
// at that size too. A setting is out of reach at the highest concurrency
// when even the earliest first full-fidelity result there, of any method,
// comes after 1.5 times the budget the method needs at concurrency 1; the
// report gives the ratio of the two, the lowest any method could have
// there. At the default budgets (32 to 64 full-fidelity evaluations)
// sixteen trials at once spend about 16 before the first of them can
// finish at full fidelity, which bounds how soon any curve at concurrency
// 16 can start; the report shows that point beside each efficiency
// figure, and counts the settings within 1.5× at the concurrencies
// between 1 and the highest too.
//
// # Searcher CPU
//
// Each run's searcher CPU is the CPU time spent inside the calls into the
// method's searcher and scheduler (hone: every call of the controller,
// through benchutil.TimeSearcher and benchutil.TimeScheduler, which
// forward the optional abilities the controller checks), or into the
// library (Goptuna: creating a trial, sampling, reporting with pruning,
// telling; Optuna: ask, suggest, report, should_prune, tell, timed with
// Python's time.thread_time). The Go side reads the calling thread's CPU
// clock with the goroutine locked to its thread for the call. The
// function's evaluation and the runner's and executor's work are not
// counted.
//
// hone's runs are deterministic: the same seed gives the same figures bit
// for bit. Goptuna v0.9.0's TPE is not (it draws from math/rand's global
// source); Optuna's TPE is, given its seed.
package searchbench
