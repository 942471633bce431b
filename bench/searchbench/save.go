package searchbench

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hone-tune/hone/bench/functions"
)

// saved is the file form of a run: its results and how it ran, so that
// its report can be written again (with another version of the report
// code) without running it again.
type saved struct {
	Info      RunInfo     `json:"info"`
	Optuna    string      `json:"optuna"`
	OptunaRan bool        `json:"optuna_ran"`
	Cells     []savedCell `json:"cells"`
	Scale     []savedCell `json:"scale,omitempty"`
}

type savedCell struct {
	Problem     string              `json:"problem"`
	Concurrency int                 `json:"concurrency"`
	Budget      float64             `json:"budget"`
	Seeds       int                 `json:"seeds"`
	Methods     []string            `json:"methods"`
	Traces      map[string][]*Trace `json:"traces"`
}

// Save writes res and info (without its plots and kept sections) as JSON.
func Save(w io.Writer, res *Results, info RunInfo) error {
	info.Plots, info.ParallelPlot, info.Notes, info.SeveralObjectives = nil, "", "", ""
	s := saved{Info: info, Optuna: res.Optuna, OptunaRan: res.OptunaRan}
	for _, c := range res.Cells {
		s.Cells = append(s.Cells, savedCell{Problem: c.Problem.Name, Concurrency: c.Concurrency, Budget: c.Budget,
			Seeds: c.Seeds, Methods: c.Methods, Traces: c.Traces})
	}
	for _, c := range res.Scale {
		s.Scale = append(s.Scale, savedCell{Problem: c.Problem.Name, Concurrency: c.Concurrency, Budget: c.Budget,
			Seeds: c.Seeds, Methods: c.Methods, Traces: c.Traces})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(s)
}

// Load reads what Save wrote.
func Load(r io.Reader) (*Results, RunInfo, error) {
	var s saved
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, RunInfo{}, err
	}
	res := &Results{Optuna: s.Optuna, OptunaRan: s.OptunaRan}
	var err error
	if res.Cells, err = loadCells(s.Cells); err != nil {
		return nil, RunInfo{}, err
	}
	if res.Scale, err = loadCells(s.Scale); err != nil {
		return nil, RunInfo{}, err
	}
	return res, s.Info, nil
}

// loadCells turns saved cells back into cells.
func loadCells(saved []savedCell) ([]*Cell, error) {
	var out []*Cell
	probs := map[string]*functions.Problem{}
	for _, c := range saved {
		p := probs[c.Problem]
		if p == nil {
			if p = functions.ByName(c.Problem); p == nil {
				return nil, fmt.Errorf("saved run: unknown problem %q", c.Problem)
			}
			probs[c.Problem] = p
		}
		for _, m := range c.Methods {
			if len(c.Traces[m]) != c.Seeds {
				return nil, fmt.Errorf("saved run: %s at concurrency %d: %d traces of %s for %d seeds",
					c.Problem, c.Concurrency, len(c.Traces[m]), m, c.Seeds)
			}
		}
		out = append(out, &Cell{Problem: p, Concurrency: c.Concurrency, Budget: c.Budget, Seeds: c.Seeds,
			Methods: c.Methods, Traces: c.Traces})
	}
	return out, nil
}
