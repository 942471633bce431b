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
}

type savedCell struct {
	Problem     string              `json:"problem"`
	Concurrency int                 `json:"concurrency"`
	Budget      float64             `json:"budget"`
	Seeds       int                 `json:"seeds"`
	Methods     []string            `json:"methods"`
	Traces      map[string][]*Trace `json:"traces"`
}

// Save writes res and info (without its plots and notes) as JSON.
func Save(w io.Writer, res *Results, info RunInfo) error {
	info.Plots, info.ParallelPlot, info.Notes = nil, "", ""
	s := saved{Info: info, Optuna: res.Optuna, OptunaRan: res.OptunaRan}
	for _, c := range res.Cells {
		s.Cells = append(s.Cells, savedCell{Problem: c.Problem.Name, Concurrency: c.Concurrency, Budget: c.Budget,
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
	probs := map[string]*functions.Problem{}
	for _, c := range s.Cells {
		p := probs[c.Problem]
		if p == nil {
			if p = functions.ByName(c.Problem); p == nil {
				return nil, RunInfo{}, fmt.Errorf("saved run: unknown problem %q", c.Problem)
			}
			probs[c.Problem] = p
		}
		for _, m := range c.Methods {
			if len(c.Traces[m]) != c.Seeds {
				return nil, RunInfo{}, fmt.Errorf("saved run: %s at concurrency %d: %d traces of %s for %d seeds",
					c.Problem, c.Concurrency, len(c.Traces[m]), m, c.Seeds)
			}
		}
		res.Cells = append(res.Cells, &Cell{Problem: p, Concurrency: c.Concurrency, Budget: c.Budget, Seeds: c.Seeds,
			Methods: c.Methods, Traces: c.Traces})
	}
	return res, s.Info, nil
}
