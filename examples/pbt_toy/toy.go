package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// The names of the metrics a Toy reports, and of its hyperparameter.
const (
	MetricQ      = "Q"      // the true objective Q(θ)
	MetricQHat   = "q_hat"  // the surrogate Q̂(θ|h) it ascends
	MetricTheta0 = "theta0" // θ after the step
	MetricTheta1 = "theta1"
	MetricH0     = "h0" // the h the step used
	MetricH1     = "h1"
	// ParamH is the configuration key of the hyperparameter h, a list of
	// two numbers.
	ParamH = "h"
)

// thetaStart is where both coordinates of θ start, as in the paper.
const thetaStart = 0.9

// thetaFile is the one file of a Toy checkpoint.
const thetaFile = "theta.json"

// Q is the true objective, 1.2 − (θ0² + θ1²); its maximum is 1.2 at θ = 0.
func Q(theta [2]float64) float64 { return 1.2 - (theta[0]*theta[0] + theta[1]*theta[1]) }

// QHat is the surrogate objective, 1.2 − (h0θ0² + h1θ1²).
func QHat(theta, h [2]float64) float64 {
	return 1.2 - (h[0]*theta[0]*theta[0] + h[1]*theta[1]*theta[1])
}

// Toy is the trainable of the toy problem (a class-style trial.Trainable,
// so hone can save it whenever it pauses or clones it). θ ∈ R² starts at
// (0.9, 0.9); each Step is one gradient-ascent step on the surrogate,
// θ ← θ + Eta·∇Q̂(θ|h) = θ − 2·Eta·(h0θ0, h1θ1), with h taken from the
// configuration. It reports the true objective as "Q". Its whole state is
// θ, and a checkpoint is θ written as JSON.
type Toy struct {
	// Eta is the learning rate.
	Eta float64

	h     [2]float64
	theta [2]float64
}

// Setup reads h from the configuration and puts θ at its start.
func (t *Toy) Setup(cfg hone.Config) error {
	h, err := hOf(cfg)
	if err != nil {
		return err
	}
	t.h, t.theta = h, [2]float64{thetaStart, thetaStart}
	return nil
}

// Step takes one gradient step on the surrogate and reports Q, Q̂, θ and h.
func (t *Toy) Step(context.Context) (trial.Metrics, error) {
	for i := range t.theta {
		t.theta[i] -= 2 * t.Eta * t.h[i] * t.theta[i]
	}
	return trial.Metrics{
		MetricQ:      Q(t.theta),
		MetricQHat:   QHat(t.theta, t.h),
		MetricTheta0: t.theta[0],
		MetricTheta1: t.theta[1],
		MetricH0:     t.h[0],
		MetricH1:     t.h[1],
	}, nil
}

// checkpoint is the content of a checkpoint's theta.json.
type checkpoint struct {
	Theta [2]float64 `json:"theta"`
}

// Save writes θ into dir.
func (t *Toy) Save(dir string) error {
	data, err := json.Marshal(checkpoint{Theta: t.theta})
	if err != nil {
		return fmt.Errorf("save theta: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, thetaFile), data, 0o644); err != nil {
		return fmt.Errorf("save theta: %w", err)
	}
	return nil
}

// Load reads θ from a checkpoint written by Save (possibly another
// trial's, when PBT clones it).
func (t *Toy) Load(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, thetaFile))
	if err != nil {
		return fmt.Errorf("load theta: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return fmt.Errorf("load theta: %s: %w", filepath.Join(dir, thetaFile), err)
	}
	t.theta = cp.Theta
	return nil
}

// hOf returns the hyperparameter h of a configuration: a list of two
// numbers under ParamH.
func hOf(cfg hone.Config) ([2]float64, error) {
	var h [2]float64
	v, ok := cfg[ParamH]
	list, isList := v.([]any)
	if !ok || !isList || len(list) != 2 {
		return h, fmt.Errorf("config %s = %v: want a list of two numbers", ParamH, v)
	}
	for i, x := range list {
		f, ok := hone.Number(x)
		if !ok {
			return h, fmt.Errorf("config %s[%d] = %v: not a number", ParamH, i, x)
		}
		h[i] = f
	}
	return h, nil
}

// withH returns a copy of cfg whose h is h.
func withH(cfg hone.Config, h [2]float64) hone.Config {
	out := cfg.Clone()
	if out == nil {
		out = hone.Config{}
	}
	out[ParamH] = []any{h[0], h[1]}
	return out
}
