package sim

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/hone-tune/hone"
)

// CurveParams shape one trial's learning curve (see Curve).
type CurveParams struct {
	Initial   float64       // the metric before training (iteration 0)
	Asymptote float64       // the value the metric tends to
	Rate      float64       // the gap to the asymptote shrinks by exp(-Rate) per iteration; >= 0
	StepTime  time.Duration // the virtual time of one iteration; >= 0
}

// ConfigCurveParams reads curve parameters from top-level configuration
// keys: "initial" (default 1), "asymptote" (default 0), "rate" (default
// 0.1) and "step_seconds" (default 1). It is Curve's default Params.
func ConfigCurveParams(cfg hone.Config) (CurveParams, error) {
	p := CurveParams{Initial: 1, Asymptote: 0, Rate: 0.1, StepTime: time.Second}
	var secs float64 = 1
	for _, f := range []struct {
		key string
		dst *float64
	}{{"initial", &p.Initial}, {"asymptote", &p.Asymptote}, {"rate", &p.Rate}, {"step_seconds", &secs}} {
		v, ok := cfg[f.key]
		if !ok {
			continue
		}
		n, ok := hone.Number(v)
		if !ok {
			return p, fmt.Errorf("config %s = %v: not a number", f.key, v)
		}
		*f.dst = n
	}
	if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
		return p, fmt.Errorf("config step_seconds = %v: must be a finite number >= 0", secs)
	}
	p.StepTime = time.Duration(secs * float64(time.Second))
	return p, nil
}

// Curve is a learning-curve Model: at iteration t (from 1) a trial reports
//
//	Metric = Asymptote + (Initial − Asymptote)·exp(−Rate·t) + Noise·z
//
// where the parameters come from the trial's configuration through Params
// and z is a standard normal number derived from (Seed, trial id, t) alone,
// so a restored trial reports exactly what the original would have. Each
// step takes StepTime of virtual time. The state is the iteration count;
// after an exploit the new configuration's curve continues from the donor's
// iteration. Use the method value Curve.New as the Model.
type Curve struct {
	// Metric names the reported metric (default "loss").
	Metric string
	// Params maps a configuration to the curve's parameters (default
	// ConfigCurveParams).
	Params func(cfg hone.Config) (CurveParams, error)
	// Noise is the standard deviation of the noise added to each value.
	Noise float64
	// Seed varies the noise between experiments.
	Seed uint64
	// MaxIterations is the iteration reported Done; 0 never ends.
	MaxIterations int
	// CheckpointEvery makes every CheckpointEvery-th result carry a
	// checkpoint; 0 never does.
	CheckpointEvery int
}

// New is the Model of c: it makes the trainable of one trial, and fails
// when Params does or returns invalid parameters.
func (c Curve) New(cfg hone.Config, trialID string) (Trainable, error) {
	params := c.Params
	if params == nil {
		params = ConfigCurveParams
	}
	p, err := params(cfg)
	if err != nil {
		return nil, fmt.Errorf("curve: %w", err)
	}
	if p.Rate < 0 || math.IsNaN(p.Rate) {
		return nil, fmt.Errorf("curve: rate = %v: must be >= 0", p.Rate)
	}
	if p.StepTime < 0 {
		return nil, fmt.Errorf("curve: step time = %v: must be >= 0", p.StepTime)
	}
	metric := c.Metric
	if metric == "" {
		metric = "loss"
	}
	return &curve{c: c, p: p, metric: metric, key: c.Seed ^ hashString(trialID)}, nil
}

// curve is the trainable of Curve.
type curve struct {
	c      Curve
	p      CurveParams
	metric string
	key    uint64 // noise key of the trial
	iter   int
}

func (t *curve) Step() (Step, error) {
	t.iter++
	v := t.p.Asymptote + (t.p.Initial-t.p.Asymptote)*math.Exp(-t.p.Rate*float64(t.iter))
	if t.c.Noise != 0 {
		v += t.c.Noise * normal(t.key, uint64(t.iter))
	}
	return Step{
		Metrics:    map[string]any{t.metric: v},
		Duration:   t.p.StepTime,
		Done:       t.c.MaxIterations > 0 && t.iter >= t.c.MaxIterations,
		Checkpoint: t.c.CheckpointEvery > 0 && t.iter%t.c.CheckpointEvery == 0,
	}, nil
}

func (t *curve) Save() ([]byte, error) { return binary.AppendUvarint(nil, uint64(t.iter)), nil }

func (t *curve) Load(state []byte) error {
	n, k := binary.Uvarint(state)
	if k <= 0 || k != len(state) || n > math.MaxInt32 {
		return fmt.Errorf("curve: bad state of %d bytes", len(state))
	}
	t.iter = int(n)
	return nil
}

// hashString is 64-bit FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// splitmix64 advances *x and returns the next output of the SplitMix64
// generator.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// normal returns a standard normal number that depends only on key and i
// (Box–Muller over two SplitMix64 outputs).
func normal(key, i uint64) float64 {
	x := key ^ (i * 0xd1b54a32d192ed03)
	u1 := (float64(splitmix64(&x)>>11) + 1) / (1 << 53) // in (0, 1]
	u2 := float64(splitmix64(&x)>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
