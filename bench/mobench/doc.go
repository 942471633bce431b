// Package mobench compares multi-objective search methods on the problems
// of bench/mofunctions by the hypervolume of what they evaluated: each
// method runs on each problem for a number of seeds at an equal budget,
// and the report gives the median hypervolume per method and problem, with
// its ratio to the true front's (mofunctions.Problem.FrontHV).
//
// A method is a function from (problem, seed, budget) to the trace of its
// evaluations (Method); adding one is adding an entry to the list the
// caller passes. The methods here are hone's random searcher (search/random
// over the problem's space) and two Optuna samplers run by the Python driver
// optuna/mo_run.py on a port of the problems (optuna/mo_problems.py):
// NSGAIISampler and the multi-objective TPESampler. hone's own
// multi-objective searchers and schedulers join the list as they come.
//
// The budget is counted in full-fidelity evaluations: an evaluation at
// step u of a problem costs Problem.Cost(u), 1 at full fidelity, so a
// multi-fidelity method spends the same budget on more, cheaper
// evaluations. The hypervolume counts full-fidelity evaluations only.
//
// The CPU column is each method's own computation per run, not the
// problem's evaluations, measured as bench/searchbench measures it. For
// hone's methods it is the calling thread's CPU clock around every call
// into the searcher and, for the experiment methods, the scheduler (FIFO's
// too), with benchutil.CPUMeter through wrappers that forward every
// optional ability the controller checks, so that the wrapped run makes
// the same decisions as the plain one; each timed call adds the timer's
// own overhead (benchutil.TimerOverhead, a microsecond or two). It leaves
// out the controller, the runner and the simulated executor around them.
// For Optuna's samplers it is time.thread_time in Python around study.ask
// with its suggest_float calls and around study.tell.
package mobench
