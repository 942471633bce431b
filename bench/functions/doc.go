// Package functions holds the multi-fidelity test functions of the
// search-quality benchmark (docs/QUALITY.md): multi-fidelity Hartmann-6
// and Hartmann-3 (as in mf-prior-bench, Hartmann-3 in its five presets),
// multi-fidelity Branin (Kandasamy et al.), counting ones (Falkner et al.,
// BOHB), the Currin exponential, Park (1991) and borehole functions with
// the low-fidelity forms of Xiong, Qian and Wu (2013), and a sum of
// Gaussian bumps over floats, integers and categorical parameters defined
// here. Each function's source is cited beside it and in Problem.Source.
//
// Each function is available twice: as plain math in its native fidelity
// (Hartmann6.Value, Branin, Currin and CurrinLow, ..., with their cost
// models), and as a Problem, the shape a benchmark drives: a search space
// of floats, integers and categories, a budget scale of whole steps
// 1..Steps, and a Run per configuration that advances one step at a time
// and reports the function at that step's fidelity. A Problem's
// cumulative cost is normalised so that one evaluation at full fidelity
// costs 1.
//
// # Fidelity settings
//
// The functions known at two fidelities (Currin, Park, borehole, bumps)
// get a continuous fidelity s = u/27 at step u and the linear
// interpolation
//
//	f(x, s) = s·f(x) + (1 − s)·f₀(x)
//
// between the full-fidelity function f and a fidelity-zero function f₀,
// with Branin's cost 0.05 + 0.95·s^1.5. Each comes in a faithful setting
// (f₀ the literature's low-fidelity form; for the bumps, the same bumps
// blurred) and a misleading one (for Currin, Park and borehole f₀(x) =
// f_L(m(x)) with m the reflection through the centre of the box; for the
// bumps a decoy basin opposite the optimum). Hartmann-3 comes in
// mf-prior-bench's default and its presets good, moderate, bad and
// terrible (more bias and noise at low fidelity).
//
// A setting is Misleading when Spearman's ρ between the values reported
// at step 1 and the full-fidelity objective is below 0.5 on a fixed
// sample of 1,000 configurations (RankStats, which also counts the pairs
// whose learning curves cross); the tests pin every problem's figures.
//
// All randomness (Hartmann's noise, counting ones' Bernoulli draws) is
// derived from a caller's 64-bit key and the step number alone, so a run
// re-created from its key and step continues exactly as the original
// would have.
package functions
