// Package functions holds the multi-fidelity test functions of the
// search-quality benchmark (BENCHMARKS.md §2): multi-fidelity Hartmann-6
// (as in mf-prior-bench), multi-fidelity Branin (Kandasamy et al.) and
// counting ones (Falkner et al., BOHB).
//
// Each function is available twice: as plain math in its native fidelity
// (Hartmann6.Value, Branin, CountingOnes.Value, with their cost models),
// and as a Problem, the shape a benchmark drives: a box search space, a
// budget scale of whole steps 1..Steps, and a Run per configuration that
// advances one step at a time and reports the function at that step's
// fidelity. A Problem's cumulative cost is normalised so that one
// evaluation at full fidelity costs 1.
//
// All randomness (Hartmann's noise, counting ones' Bernoulli draws) is
// derived from a caller's 64-bit key and the step number alone, so a run
// re-created from its key and step continues exactly as the original
// would have.
package functions
