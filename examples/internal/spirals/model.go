// Package spirals is the small model the examples tune: a one-hidden-layer
// network trained with minibatch SGD and momentum on a generated two-spirals
// data set, with a class-style trainable that hone can save on demand.
package spirals

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/trial"
)

// dataset is a two-class spiral in the plane: hard enough that the
// learning rate and the width of the network matter.
type dataset struct {
	x [][2]float64
	y []int
}

func spirals(n int, noise float64, seed uint64) dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	d := dataset{x: make([][2]float64, n), y: make([]int, n)}
	for i := range n {
		class := i % 2
		t := r.Float64() * 3 * math.Pi
		rad := t / (3 * math.Pi)
		a := t + float64(class)*math.Pi
		d.x[i] = [2]float64{rad*math.Cos(a) + r.NormFloat64()*noise, rad*math.Sin(a) + r.NormFloat64()*noise}
		d.y[i] = class
	}
	return d
}

// mlp is a one-hidden-layer tanh network with a softmax output, trained by
// minibatch SGD with momentum.
type mlp struct {
	H      int          `json:"hidden"`
	W1     [][2]float64 `json:"w1"` // H x 2
	B1     []float64    `json:"b1"`
	W2     [][]float64  `json:"w2"` // 2 x H
	B2     [2]float64   `json:"b2"`
	V      []float64    `json:"v"` // momentum buffer, flattened parameters
	Epochs int          `json:"epochs"`
	Seed   uint64       `json:"seed"`
}

func newMLP(h int, seed uint64) *mlp {
	r := rand.New(rand.NewPCG(seed, 11))
	m := &mlp{H: h, W1: make([][2]float64, h), B1: make([]float64, h), W2: [][]float64{make([]float64, h), make([]float64, h)}, Seed: seed}
	for j := range h {
		m.W1[j] = [2]float64{r.NormFloat64() * 1.5, r.NormFloat64() * 1.5}
		m.W2[0][j] = r.NormFloat64() / math.Sqrt(float64(h))
		m.W2[1][j] = r.NormFloat64() / math.Sqrt(float64(h))
	}
	m.V = make([]float64, m.numParams())
	return m
}

func (m *mlp) numParams() int { return 2*m.H + m.H + 2*m.H + 2 }

// forward returns the hidden activations and class probabilities.
func (m *mlp) forward(x [2]float64, h []float64) [2]float64 {
	for j := range m.H {
		h[j] = math.Tanh(m.W1[j][0]*x[0] + m.W1[j][1]*x[1] + m.B1[j])
	}
	var z [2]float64
	for k := range 2 {
		z[k] = m.B2[k]
		for j := range m.H {
			z[k] += m.W2[k][j] * h[j]
		}
	}
	mx := math.Max(z[0], z[1])
	e0, e1 := math.Exp(z[0]-mx), math.Exp(z[1]-mx)
	return [2]float64{e0 / (e0 + e1), e1 / (e0 + e1)}
}

// epoch runs one pass of minibatch SGD and returns the mean training loss.
func (m *mlp) epoch(d dataset, lr, momentum float64, batch int) float64 {
	r := rand.New(rand.NewPCG(m.Seed, uint64(m.Epochs)))
	order := r.Perm(len(d.y))
	h := make([]float64, m.H)
	g := make([]float64, m.numParams())
	loss := 0.0
	for start := 0; start < len(order); start += batch {
		clear(g)
		end := min(start+batch, len(order))
		for _, i := range order[start:end] {
			p := m.forward(d.x[i], h)
			loss -= math.Log(math.Max(p[d.y[i]], 1e-12))
			var dz [2]float64
			for k := range 2 {
				dz[k] = p[k]
				if k == d.y[i] {
					dz[k]--
				}
			}
			// gradient layout: W1 (2H), B1 (H), W2 (2H), B2 (2)
			for j := range m.H {
				dh := (dz[0]*m.W2[0][j] + dz[1]*m.W2[1][j]) * (1 - h[j]*h[j])
				g[2*j] += dh * d.x[i][0]
				g[2*j+1] += dh * d.x[i][1]
				g[2*m.H+j] += dh
				g[3*m.H+j] += dz[0] * h[j]
				g[4*m.H+j] += dz[1] * h[j]
			}
			g[5*m.H] += dz[0]
			g[5*m.H+1] += dz[1]
		}
		n := float64(end - start)
		for p := range g {
			m.V[p] = momentum*m.V[p] - lr*g[p]/n
		}
		for j := range m.H {
			m.W1[j][0] += m.V[2*j]
			m.W1[j][1] += m.V[2*j+1]
			m.B1[j] += m.V[2*m.H+j]
			m.W2[0][j] += m.V[3*m.H+j]
			m.W2[1][j] += m.V[4*m.H+j]
		}
		m.B2[0] += m.V[5*m.H]
		m.B2[1] += m.V[5*m.H+1]
	}
	m.Epochs++
	return loss / float64(len(order))
}

func (m *mlp) accuracy(d dataset) float64 {
	h := make([]float64, m.H)
	ok := 0
	for i := range d.y {
		p := m.forward(d.x[i], h)
		pred := 0
		if p[1] > p[0] {
			pred = 1
		}
		if pred == d.y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(d.y))
}

func (m *mlp) save(dir string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "model.json"), b, 0o644)
}

func loadMLP(dir string) (*mlp, error) {
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	m := &mlp{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("decode model: %w", err)
	}
	return m, nil
}

// Trainable is the class-style trainable of the examples. Config keys: lr,
// momentum, hidden, batch_size. Size is the training set size. With
// ReportConfig set, each result also carries the lr and momentum the epoch
// trained with, so a schedule that changes them (PBT) can be read back from
// the results.
//
// Setup reads the configuration and Load only replaces the network (and its
// momentum buffer), so a trial that hone restarts with a new configuration
// from another trial's checkpoint trains on from those weights with its
// own lr and momentum.
type Trainable struct {
	Size         int
	ReportConfig bool
	train, val   dataset
	lr, momentum float64
	batch        int
	net          *mlp
}

// Setup builds the data and a fresh network from cfg.
func (t *Trainable) Setup(cfg hone.Config) error {
	lr, _ := hone.Number(cfg["lr"])
	mom, _ := hone.Number(cfg["momentum"])
	hidden, _ := hone.Number(cfg["hidden"])
	batch, _ := hone.Number(cfg["batch_size"])
	if lr <= 0 || hidden < 1 || batch < 1 {
		return fmt.Errorf("bad config %v", cfg)
	}
	if t.Size <= 0 {
		t.Size = 4000
	}
	t.lr, t.momentum, t.batch = lr, mom, int(batch)
	t.train, t.val = spirals(t.Size, 0.05, 1), spirals(2000, 0.05, 2)
	t.net = newMLP(int(hidden), 42)
	return nil
}

// Step trains one epoch and reports the training loss and validation
// accuracy.
func (t *Trainable) Step(context.Context) (trial.Metrics, error) {
	loss := t.net.epoch(t.train, t.lr, t.momentum, t.batch)
	m := trial.Metrics{"loss": loss, "val_accuracy": t.net.accuracy(t.val)}
	if t.ReportConfig {
		m["lr"], m["momentum"] = t.lr, t.momentum
	}
	return m, nil
}

// Save writes the network to dir.
func (t *Trainable) Save(dir string) error { return t.net.save(dir) }

// Load reads the network from dir.
func (t *Trainable) Load(dir string) error {
	m, err := loadMLP(dir)
	if err != nil {
		return err
	}
	t.net = m
	return nil
}
