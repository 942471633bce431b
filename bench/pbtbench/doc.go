// Package pbtbench benchmarks population-based schedulers (docs/BENCHMARKS.md
// §2): hone's PBT and PB2 beside random search at equal total budget, on
// two problems, for populations of 4 and 16, over several seeds; and it
// measures what a PBT exploit costs at the storage level against copying
// the checkpoint's bytes (ExploitLatency).
//
// # Problems
//
// Toy is the PBT toy of Jaderberg et al. (2017, Fig. 2): θ ∈ ℝ² starts at
// (0.9, 0.9), the objective is Q(θ) = 1.2 − (θ₀² + θ₁²) (maximised; its
// supremum 1.2 is approached, never reached), and one step is
// θ ← θ + η∇Q̂(θ|h) on the surrogate Q̂(θ|h) = 1.2 − (h₀θ₀² + h₁θ₁²), that is
// θᵢ ← θᵢ(1 − 2ηhᵢ), with the hyperparameter h ∈ [0, 1]² (η = 0.04). Each
// member draws its initial h uniformly. The best any schedule of h can do
// in T steps is h = (1, 1) throughout.
//
// LRSchedule is a noisy quadratic model (the NQM of Zhang et al. 2019) of
// SGD whose only hyperparameter is the learning rate, in [10⁻³, 1] on a log
// scale. The loss is ½Σᵢ λᵢwᵢ² with curvatures λᵢ log-spaced from 1 down to
// 10⁻²; the stochastic gradient is λᵢwᵢ plus noise of variance σ²λᵢ. A
// member's state is the exact second moment mᵢ = E[wᵢ²] of its iterate,
// which one step with learning rate α moves to (1 − αλᵢ)²mᵢ + α²σ²λᵢ; the
// true loss is Σλᵢmᵢ / Σλᵢ (1 at the start). Large rates make fast early
// progress on the flat directions, but the stationary loss (the noise
// floor) grows in proportion to the rate, so the best fixed rate is beaten
// by a decaying schedule: NQM.BestConstant and NQM.BestSchedule compute
// both optima on the expected loss, and the report prints them. Members
// report the true loss times a log-normal observation noise (a validation
// estimate), seeded by (seed, trial id, step), so a restored member
// continues exactly as the original would have; the benchmark scores the
// true loss.
//
// # Methods and budget
//
// Every method runs through runner.Run on the sim executor with the whole
// population running at once (one virtual second per step, so members
// move in lockstep), checkpoints kept in a local store:
//
//	random     random search with FIFO: the population's configurations,
//	           each trained for T steps, no interaction
//	pbt        hone's PBT with Ray's defaults (quantile 0.25, resample
//	           probability 0.25, perturbation factors 1.2 and 0.8,
//	           asynchronous), perturbing every Interval steps
//	           (training_iteration), the explored value clamped to the
//	           hyperparameter's bounds
//	pb2        hone's PB2 (pb2.DefaultConfig) with the same PBT settings
//	           and the hyperparameters' bounds as hyperparam_bounds, the
//	           learning rate's on a log scale (pb2.Config.LogScale), as it
//	           is sampled and as PBT's multiplicative perturbations move it
//	pbt-synch  pbt, synchronous
//	pb2-synch  pb2, synchronous
//
// All of them start from the same initial population for a given seed
// (the same random searcher). Each member trains T steps of its own
// lineage (an exploit restores the donor's state and step count), so the
// nominal budget, counted in training steps reported by the whole
// population, is population × T. Synchronous runs use exactly that;
// asynchronous PBT and PB2 use somewhat more, because a member judged
// against the others' older scores may restore a donor's checkpoint from
// an earlier perturbation time (Ray's semantics) and train those steps
// again. Figures are compared at the nominal budget.
//
// # Scores
//
// At every budget (number of steps reported so far, all members together)
// the incumbent is the result with the best reported metric so far; its
// score is its true metric (Q for Toy, the noise-free loss for
// LRSchedule). Curves are the median and quartiles over seeds of the
// incumbent's score against budget.
package pbtbench
