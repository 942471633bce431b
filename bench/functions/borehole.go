package functions

import "math"

// The borehole function's inputs and their ranges, in order (Virtual
// Library of Simulation Experiments, "borehole"): radius of the borehole
// r_w (m), radius of influence r (m), transmissivities T_u and T_l of the
// upper and lower aquifers (m²/yr), potentiometric heads H_u and H_l (m),
// length of the borehole L (m) and its hydraulic conductivity K_w (m/yr).
var BoreholeDims = []Dim{
	{Name: "rw", Lo: 0.05, Hi: 0.15},
	{Name: "r", Lo: 100, Hi: 50000},
	{Name: "Tu", Lo: 63070, Hi: 115600},
	{Name: "Hu", Lo: 990, Hi: 1110},
	{Name: "Tl", Lo: 63.1, Hi: 116},
	{Name: "Hl", Lo: 700, Hi: 820},
	{Name: "L", Lo: 1120, Hi: 1680},
	{Name: "Kw", Lo: 9855, Hi: 12045},
}

// Borehole is the borehole function (Harper and Gupta 1983; Morris,
// Mitchell and Ylvisaker 1993), the water flow rate through a borehole
// (m³/yr), for x in the order of BoreholeDims:
//
//	f(x) = 2π T_u (H_u − H_l) / (ln(r/r_w) · [1 + 2 L T_u / (ln(r/r_w) r_w² K_w) + T_u/T_l])
//
// It is monotone in every input, so the benchmark, which maximises it, has
// its optimum at a corner of the box: BoreholeArgmax.
func Borehole(x []float64) float64 {
	rw, r, tu, hu, tl, hl, l, kw := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
	lr := math.Log(r / rw)
	return 2 * math.Pi * tu * (hu - hl) / (lr * (1 + 2*l*tu/(lr*rw*rw*kw) + tu/tl))
}

// BoreholeLow is the low-fidelity borehole function of Xiong, Qian and Wu
// (2013):
//
//	f_L(x) = 5 T_u (H_u − H_l) / (ln(r/r_w) · [1.5 + 2 L T_u / (ln(r/r_w) r_w² K_w) + T_u/T_l])
func BoreholeLow(x []float64) float64 {
	rw, r, tu, hu, tl, hl, l, kw := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
	lr := math.Log(r / rw)
	return 5 * tu * (hu - hl) / (lr * (1.5 + 2*l*tu/(lr*rw*rw*kw) + tu/tl))
}

// BoreholeArgmax is where the borehole function is largest on its box:
// r_w, T_u, H_u, T_l and K_w at their upper bounds, r, H_l and L at their
// lower ones.
var BoreholeArgmax = []float64{0.15, 100, 115600, 1110, 116, 700, 1120, 12045}
