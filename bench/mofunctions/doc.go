// Package mofunctions holds the multi-objective test problems of the
// benchmark: ZDT1, ZDT2 and ZDT3 (Zitzler, Deb and Thiele 2000), DTLZ2 with
// three objectives (Deb, Thiele, Laumanns and Zitzler 2002/2005), and a
// multi-fidelity DTLZ2 whose distance function is evaluated on a prefix of
// its variables.
//
// Every objective is minimised. Each problem carries its known Pareto front
// (sampled densely by TrueFront), a reference point for the hypervolume
// (Problem.Ref) and the hypervolume of the true front with respect to it
// (Problem.FrontHV, computed from TrueFront with package pareto; the tests
// recompute it), so a report can give a method's hypervolume regret
// FrontHV − HV or its ratio HV / FrontHV.
//
// # Number of variables
//
// The ZDT problems are defined for any n ≥ 2 and the literature's default is
// n = 30. Here they have n = ZDTVars = 6: one position variable x₁ and five
// distance variables. With n = 30 and the usual reference point (1.1, 1.1)
// a uniform configuration has g ≈ 5.5 and f₂ ≈ 4, far outside the
// reference box (none of 10,000 lands inside), and the few hundred trials
// of a hyperparameter tuner's budget leave most methods' hypervolume at 0,
// which compares nothing; that budget is meant to tell methods apart on
// the shape of the front, not on 29-dimensional descent. With five
// distance variables 0.18% of uniform configurations of ZDT1 land inside
// the box (0.46% of ZDT3's, none of ZDT2's, whose f₂ = g − f₁²/g needs g
// near 1), so a searcher that learns can reach the box early and spend the
// rest of the budget spreading along the front. The
// functions ZDT1, ZDT2 and ZDT3 take any n for other uses. DTLZ2 keeps
// the literature's n = M + k − 1 = 12 (k = 10): 3.7% of its uniform
// configurations land inside the box.
package mofunctions
