// Package searchbench is the search-quality benchmark of BENCHMARKS.md §2:
// it runs hone's searchers and schedulers, and Goptuna v0.9.0 beside them,
// on the multi-fidelity test functions of package functions, at equal total
// budget, over several seeds, and reports regret against budget.
//
// # How a problem runs on hone
//
// Every hone method runs through runner.Run on the sim executor. A trial's
// trainable evaluates its configuration one budget step at a time: step u
// reports "loss" = f(x, Fidelity(u)), "budget" = u (the time attribute of
// HyperBand, ASHA and BOHB) and "cost" = the cost increment of the step,
// and the step takes that cost as virtual time (one unit of cost is one
// virtual hour). A trial that is paused and resumed continues from its
// checkpoint, so reaching step u costs Cost(u) however often the trial was
// paused. The schedulers thus see a learning curve whose value at budget u
// is the function at that fidelity.
//
// # Budget and regret
//
// Cost is normalised so that one evaluation at full fidelity costs 1; the
// budget of a run is a number of full-fidelity evaluations' worth of cost.
// Each method's run ends when the sum of the cost of the steps it reported
// would exceed the budget; a step that would exceed it is not counted.
// Only evaluations at full fidelity count as found (the incumbent at the
// highest budget, as in the BOHB paper): the incumbent is the full-fidelity
// evaluation with the lowest reported value, and the regret is its
// noise-free full-fidelity value minus the optimum (for counting ones the
// expected value; for the other functions the reported value, which has no
// noise at full fidelity).
//
// # Methods
//
//	random          random search, FIFO, every trial to full fidelity
//	hyperband       hone's synchronous HyperBand + random search
//	asha            hone's ASHA + random search
//	bohb            hone's HyperBand for BOHB + the BOHB searcher
//	asha-bohb       hone's ASHA + the BOHB searcher: asynchronous BOHB
//	dehb            hone's DEHB searcher and scheduler
//	tpe             hone's TPE, FIFO, every trial to full fidelity
//	tpe-parallel    hone's TPE as a spec's searcher: tpe has it (multivariate,
//	                constant liar), FIFO, every trial to full fidelity
//	tpe-asha        hone's TPE on ASHA's rungs (grace 1, η 3) with the fidelity
//	                check, ASHA advised by it
//	auto            what a spec with searcher: auto and scheduler: auto and
//	                stop.training_iteration = steps builds (spec.Build)
//	goptuna-tpe     Goptuna's TPE sampler, every trial to full fidelity
//	goptuna-tpe-sh  Goptuna's TPE sampler with its successive-halving pruner
//
// All of them use η = 3 and the problem's budget steps 1..Steps (the
// smallest budget is step 1). Goptuna is driven directly with the same
// problem, the same step-by-step evaluation and the same budget accounting.
package searchbench
