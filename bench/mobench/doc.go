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
package mobench
