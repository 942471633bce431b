// Package pareto holds the arithmetic of several objectives: Pareto
// dominance, the non-dominated front, non-dominated sorting (plain and with
// Deb's constrained domination), NSGA-II's crowding distance, and the exact
// hypervolume with each point's exclusive contribution to it.
//
// Everything is in minimisation form: a point is a []float64 of losses, one
// per objective, lower being better in every coordinate. Callers map
// metric values to losses with hone.Objective.Loss first (−v for a
// maximised metric).
//
// # NaN
//
// A NaN coordinate is treated as +Inf: worse than every number, and equal to
// +Inf and to another NaN. A point with a NaN loss is thus dominated by any
// point that is no worse elsewhere, and it never adds to a hypervolume.
//
// The functions panic when points of one call differ in length (or differ
// from the reference point's length): that is a programming error, like an
// index out of range.
package pareto
