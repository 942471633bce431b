// Package pb2 is Population Based Bandits (Parker-Holder et al. 2020,
// "Provably efficient online hyperparameter optimization with
// population-based bandits") with Ray Tune's semantics (docs/SEMANTICS.md §4
// "PB2"): PBT whose explore step is a GP bandit instead of random
// mutations.
//
// At each perturbation check of a trial PB2 records (trial, time,
// hyperparameters, score). When a lower-quantile trial clones a donor, the
// records are turned into a data set: within each run of one trial with one
// configuration, consecutive records give y = Δscore/Δtime at
// X = [time, score before, hyperparameters] (rows with Δtime ≤ 0 or an
// undefined y are dropped); the last MaxRows rows by time are kept. X is
// scaled to [0, 1] (time and score by their range in the data,
// hyperparameters by Bounds: linearly, or, for a key of LogScale, their
// logarithm within the logarithm of the bounds) and y standardised and
// clipped to [-2, 2]. A GP with the time-varying squared-exponential kernel
// of Bogunovic et al.
//
//	k(x, x') = variance · exp(−‖x₁: − x'₁:‖² / lengthscale²) · (1 − ε)^(|t − t'| / 2)
//
// (t = x₀, the scaled time) is fit by maximising its marginal likelihood,
// and the new hyperparameters maximise UCB = mean + κ·variance at the
// donor's latest (time, score before), κ = √(0.2 + max(0, log(0.4·n))).
// Configurations already chosen in the current round (no trial has
// reported a later time since the round's first choice) are penalised as
// in Ray: the variance comes from a second GP that also holds them, with
// y = 0, so it is small where they are. The clone then gets a record at the
// donor's time and score with its new hyperparameters, so its next record
// measures the improvement the new hyperparameters made from the donor's
// weights. A donor without a row in the data set passes its configuration
// on unchanged.
//
// Differences from Ray Tune, each for a reason:
//   - Ray chooses how many of the most recent rows (200, 210, … up to all)
//     the GP uses by refitting it for each choice, O(MaxRows/10) fits of up
//     to MaxRows points per explore. hone fits the kernel hyperparameters
//     on the FitRows (200) most recent rows once, and conditions the GP on
//     the whole window of at most MaxRows rows.
//   - The kernel hyperparameters (variance, lengthscale, ε, noise) are
//     bounded, through smooth transforms, to [1e-4, 1e3], [1e-3, 1e3],
//     [0, 0.5] and [1e-6, 1e2], and fit with gonum's L-BFGS; Ray's GPy fit is
//     unbounded except for ε ≤ 0.5. As in Ray the mean model's lengthscale is
//     then clipped to [√1e-5, 1] (Ray's kernel divides by the lengthscale,
//     not its square, and clips it to [1e-5, 1]).
//   - The acquisition is maximised from Starts (10, as Ray) uniform random
//     points by projected gradient ascent inside the unit box, where Ray
//     runs L-BFGS-B; new values are not rounded to float32 as in Ray.
//   - A Cholesky factorisation that fails gets a growing diagonal jitter;
//     Ray adds 1e-3 to the inputs. If the GP still cannot be fit, the new
//     hyperparameters are drawn uniformly within the bounds.
//   - Bounds are floats, as in Ray. A value that was an int (Go int, int32
//     or int64) is truncated to an int as Ray's cast does, and clamped to the
//     integers within the bounds; if the bounds hold no integer it becomes a
//     float64. Every other value becomes a float64.
//   - Records with a non-finite y are dropped (Ray drops only NaN), and a
//     record whose configuration lacks a bound key or holds a non-number
//     there is not kept (Ray fails).
//   - Keys of LogScale are modelled, and chosen, on a log scale; Ray's
//     bounds are linear only, which leaves a GP over a learning rate in
//     [1e-4, 1e-1] all but blind below 1e-2 (nine tenths of the range lie
//     above it). Keys not in LogScale are modelled as in Ray.
//
// Without LogScale keys PB2 decides exactly as it did before LogScale
// existed, so the journal of an experiment started earlier replays to the
// choices it recorded (TestResumeJournalOfEarlierRelease pins it).
//
// All randomness comes from the scheduler's seeded random source, so a run
// is deterministic given its seed.
package pb2

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/pbt"
)

// Config holds PB2's parameters. Start from DefaultConfig.
type Config struct {
	// PBT holds the PBT parameters (metric, mode, time attr, perturbation
	// interval, burn-in, quantile fraction, synch, logging, require_attrs,
	// and an optional custom Explore run on each new configuration).
	// Mutations and Explorer must be left empty: New sets them from Bounds.
	// ResampleProbability and PerturbationFactors are not used.
	PBT pbt.Config
	// Bounds (hyperparam_bounds) are the [low, high] ranges of the
	// hyperparameters PB2 tunes, by configuration key; a nested key is
	// written "a/b". A trial added without one of them gets a uniform
	// sample within its bounds.
	Bounds map[string][2]float64
	// LogScale names the keys of Bounds that PB2 models on a log scale
	// (their bounds must be positive; {loguniform: [low, high]} in a
	// spec's hyperparam_bounds): the GP sees log(value) scaled to [0, 1]
	// within the logarithms of the bounds, the chosen value is mapped back
	// the same way, and a trial added without the key gets a log-uniform
	// sample. Use it for a hyperparameter that spans decades, such as a
	// learning rate.
	LogScale map[string]bool
	// MaxRows caps the GP's data set to the most recent rows by time
	// (default 1000, as Ray).
	MaxRows int
	// FitRows is how many of the most recent rows fit the kernel's
	// hyperparameters (default 200, Ray's shortest data set).
	FitRows int
	// Starts is the number of random starting points of the acquisition's
	// maximisation (default 10, as Ray).
	Starts int
}

// DefaultConfig returns Ray's defaults, without bounds.
func DefaultConfig() Config {
	p := pbt.DefaultConfig()
	p.ResampleProbability, p.PerturbationFactors = new(0.0), nil
	return Config{PBT: p, MaxRows: 1000, FitRows: 200, Starts: 10}
}

// withDefaults gives zero-valued counts DefaultConfig's values.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	if c.MaxRows == 0 {
		c.MaxRows = def.MaxRows
	}
	if c.FitRows == 0 {
		c.FitRows = def.FitRows
	}
	if c.Starts == 0 {
		c.Starts = def.Starts
	}
	return c
}

// Validate names the first invalid parameter. Zero counts are valid: New
// gives them their defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	if len(c.PBT.Mutations) != 0 {
		return invalid("hyperparam_mutations", "hyperparam_mutations must be empty: PB2 explores hyperparam_bounds")
	}
	if c.PBT.Explorer != nil {
		return invalid("", "the PBT explorer must be empty: PB2 provides its own")
	}
	if err := checkBounds(c.Bounds); err != nil {
		return err
	}
	for _, k := range sortedKeys(c.LogScale) {
		b, ok := c.Bounds[k]
		switch {
		case !c.LogScale[k]:
		case !ok:
			return invalid("hyperparam_bounds", "log scale: %s is not a key of hyperparam_bounds", k)
		case !(b[0] > 0):
			return invalid("hyperparam_bounds."+k, "hyperparam_bounds.%s = [%v, %v]: a log scale needs bounds > 0", k, b[0], b[1])
		}
	}
	switch {
	case c.MaxRows < 1:
		return invalid("", "max rows = %d: must be >= 1", c.MaxRows)
	case c.FitRows < 1:
		return invalid("", "fit rows = %d: must be >= 1", c.FitRows)
	case c.Starts < 1:
		return invalid("starts", "starts = %d: must be >= 1", c.Starts)
	}
	p := c.pbtConfig(nopExplorer{})
	if p.PerturbationInterval == 0 {
		p.PerturbationInterval = pbt.DefaultConfig().PerturbationInterval
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("pb2: %w", err)
	}
	return nil
}

// checkBounds names the first bad bound: none at all, an empty key
// segment, a key that is both a value and a map, a non-finite bound, or
// low > high.
func checkBounds(b map[string][2]float64) error {
	if len(b) == 0 {
		return invalid("hyperparam_bounds", "hyperparam_bounds is required: the keys PB2 tunes, each [low, high]")
	}
	for _, k := range sortedKeys(b) {
		parts := strings.Split(k, "/")
		for i, part := range parts {
			if part == "" {
				return invalid("hyperparam_bounds."+k, "hyperparam_bounds.%s: a key has an empty part", k)
			}
			if prefix := strings.Join(parts[:i], "/"); i > 0 {
				if _, ok := b[prefix]; ok {
					return invalid("hyperparam_bounds", "hyperparam_bounds: %s and %s conflict: a key cannot be both a value and a map", prefix, k)
				}
			}
		}
		lo, hi := b[k][0], b[k][1]
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) || lo > hi {
			return invalid("hyperparam_bounds."+k, "hyperparam_bounds.%s = [%v, %v]: want finite [low, high] with low <= high", k, lo, hi)
		}
	}
	return nil
}

// New returns PB2: a PBT scheduler whose explore step is PB2's GP bandit
// and whose mutations are uniform samples within Bounds (they fill keys
// missing from a new trial's configuration and name the keys in a perturbed
// trial's tag). Zero-valued counts take DefaultConfig's values, and
// zero-valued PBT fields what pbt.New gives them.
func New(cfg Config) (*pbt.Scheduler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := pbt.New(cfg.pbtConfig(newExplorer(cfg)))
	if err != nil {
		return nil, fmt.Errorf("pb2: %w", err)
	}
	s.Ranking.Plugin = "pb2"
	return s, nil
}

// pbtConfig is the PBT configuration of PB2 with explorer ex.
func (c Config) pbtConfig(ex pbt.Explorer) pbt.Config {
	p := c.PBT
	p.Mutations = mutations(c.Bounds, c.LogScale)
	p.Explorer = ex
	p.ResampleProbability = new(0.0)
	p.PerturbationFactors = []float64{1} // not used with an explorer
	return p
}

// mutations turns bounds into PBT mutations: a uniform distribution per
// key (log-uniform for a key of logScale), nested maps for "a/b" keys.
func mutations(bounds map[string][2]float64, logScale map[string]bool) map[string]any {
	root := map[string]any{}
	for _, k := range sortedKeys(bounds) {
		parts := strings.Split(k, "/")
		m := root
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		var d any = uniform{lo: bounds[k][0], hi: bounds[k][1]}
		if logScale[k] {
			d = logUniform{lo: bounds[k][0], hi: bounds[k][1]}
		}
		m[parts[len(parts)-1]] = d
	}
	return root
}

// uniform is the uniform distribution on [lo, hi], a PBT mutation.
type uniform struct{ lo, hi float64 }

// Sample returns a float64 drawn uniformly from [lo, hi].
func (u uniform) Sample(r *rand.Rand) any { return u.lo + r.Float64()*(u.hi-u.lo) }

// logUniform is the distribution on [lo, hi] (0 < lo) whose logarithm is
// uniform, a PBT mutation.
type logUniform struct{ lo, hi float64 }

// Sample returns a float64 whose logarithm is drawn uniformly from
// [log lo, log hi], within [lo, hi].
func (u logUniform) Sample(r *rand.Rand) any {
	v := math.Exp(math.Log(u.lo) + r.Float64()*(math.Log(u.hi)-math.Log(u.lo)))
	return math.Min(math.Max(v, u.lo), u.hi)
}

// nopExplorer lets Validate check the PBT parameters before an explorer
// exists.
type nopExplorer struct{}

func (nopExplorer) Observe(*hone.Trial, float64, float64, hone.Config) {}
func (nopExplorer) Explore(_ *rand.Rand, _, _ *hone.Trial, cfg hone.Config) hone.Config {
	return cfg.Clone()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// invalid is the error of Validate for param: a *hone.ParamError.
func invalid(param, format string, args ...any) error {
	return &hone.ParamError{Plugin: "pb2", Param: param, Err: fmt.Errorf(format, args...)}
}
