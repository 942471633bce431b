// Package space defines hyperparameter search spaces: domains to sample
// from, grids to enumerate, and their YAML and JSON syntax.
//
// A Space is a nested map of Domains, sub-spaces and constants. Sampling
// takes a seeded *rand.Rand from the caller (math/rand/v2) and is
// deterministic: the same space, the same source state and the same calls
// give the same configurations. The package keeps no mutable state.
//
// # Space files
//
// In YAML (JSON is the same tree):
//
//	lr:     {loguniform: [1e-4, 1e-1]}    # float, log scale; optional base: [lo, hi, 10]
//	x:      {uniform: [0, 1]}             # float in [0, 1]
//	q:      {quniform: [0, 1, 0.1]}       # float, a multiple of 0.1
//	ql:     {qloguniform: [0.1, 10, 0.1]} # float, log scale, a multiple of 0.1
//	n:      {randint: [1, 10]}            # int in 1..9 (high exclusive)
//	qn:     {qrandint: [0, 100, 10]}      # int in 0, 10, ..., 100 (high inclusive)
//	ln:     {lograndint: [1, 1000]}       # int in 1..999, log scale
//	qln:    {qlograndint: [8, 512, 8]}    # int multiple of 8 in 8..512, log scale
//	m:      {normal: [0, 1]}              # float from N(mean, sd²)
//	qm:     {qnormal: [0, 1, 0.5]}        # ... rounded to a multiple of 0.5
//	layers: {choice: [1, 2, 3]}           # one of the values (any JSON values)
//	bs:     {grid: [16, 32]}              # grid search: every value (also grid_search)
//	model:                                # a nested map is a sub-space
//	  width: {choice: [64, 128]}
//	  act: relu                           # plain scalars and lists are constants
//	convs:  [{choice: [16, 32]}, 64]      # domains inside lists are sampled too
//	opts:   {const: {uniform: [0, 1]}}    # {const: V}: V literally
//
// A map with exactly one key that names a domain is that domain; any other
// map is a sub-space. To write a constant map whose single key happens to be
// a domain name, wrap it in {const: ...}. A one-key map whose key looks like
// a misspelt domain name (up to case for short names, one or two edits for
// longer ones) and whose value is a list is rejected with a suggestion; wrap
// it in {const: ...} if it was meant literally.
//
// Every bound must be a finite number; integer bounds must be integers of
// magnitude at most 2^53. Choice and grid values are literals: maps among
// them are not searched. A list is searched element by element: domains
// and sub-spaces among its elements are sampled (grid domains join the
// grid), and a list without any is a constant.
//
// # Semantics
//
// The distributions follow Ray Tune's: quantized kinds draw from the range
// spanned by the multiples of q inside [low, high] and round to the nearest
// multiple (so values stay inside [low, high]; quniform returns a float,
// qrandint an int). Ints are Go ints, other numbers float64. Grid domains
// are enumerated by Space.Grid in Ray Tune's order; elsewhere (Sample) a
// grid domain is drawn like a choice. Func and FuncRand domains, available
// in Go only, compute a value from the configuration sampled so far, like
// Ray Tune's sample_from; they run last, in key-path order, except that a
// Func that declares the keys it reads with Needs runs after the Funcs it
// needs (a cycle of needs is a Validate error naming its keys).
//
// For model-based searchers, Params lists the domains with their bounds and
// ToUnit/FromUnit encode configurations as points of the unit cube; domains
// inside lists are not among them and are drawn at random.
package space
