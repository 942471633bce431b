package functions

// CountingOnes is the counting-ones function of the BOHB paper: Cat binary
// and Cont continuous parameters in [0, 1], and at budget b
//
//	f_b(x) = −(Σ x_cat + Σⱼ mean of b Bernoulli(x_cont,ⱼ) draws)
//
// Its minimum, −(Cat + Cont), is reached with every parameter at 1; the
// expected value at any budget is −(Σ x_cat + Σ x_cont).
type CountingOnes struct {
	Cat, Cont int
}

// Budget range of counting ones, as in the BOHB paper (η = 3 gives the
// budgets 9, 27, 81, 243, 729).
const (
	CountingOnesBMin = 9
	CountingOnesBMax = 729
)

// Min returns the function's minimum, −(Cat + Cont).
func (c CountingOnes) Min() float64 { return -float64(c.Cat + c.Cont) }

// Expected returns the expected value −(Σ x_cat + Σ x_cont), which is also
// the limit of f_b as b grows.
func (c CountingOnes) Expected(cat []int, cont []float64) float64 {
	var sum float64
	for _, v := range cat {
		sum += float64(v)
	}
	for _, v := range cont {
		sum += v
	}
	return -sum
}

// Value returns f_b(x) given, per continuous parameter, the number of
// successes among its b draws.
func (c CountingOnes) Value(cat []int, successes []int, b int) float64 {
	var sum float64
	for _, v := range cat {
		sum += float64(v)
	}
	for _, k := range successes {
		sum += float64(k) / float64(b)
	}
	return -sum
}

// Cost returns the cost of one evaluation at budget b: b/729 (the number
// of draws, normalised to 1 at the largest budget).
func (CountingOnes) Cost(b float64) float64 { return b / CountingOnesBMax }
