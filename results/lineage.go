package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/pbt"
)

// Exploit is one line of a trial's PBT policy log: at TargetIteration the
// trial (original tag Target, id TargetID) cloned the donor (tag Donor, id
// DonorID) as of DonorIteration — the iteration of the checkpoint it
// restored — and went on with Config (explored from DonorConfig). An id is
// "" when the tag names no trial of the experiment.
type Exploit struct {
	Target, Donor                   string
	TargetID, DonorID               string
	TargetIteration, DonorIteration int
	DonorConfig, Config             hone.Config
}

// trialByTag returns the id of the trial whose original tag is tag: tags
// start with the trial's index ("<index>_<config>"). It is "" when e is
// nil or no trial has that index.
func (e *Experiment) trialByTag(tag string) string {
	if e == nil {
		return ""
	}
	i := strings.IndexByte(tag, '_')
	if i < 0 {
		i = len(tag)
	}
	idx, err := strconv.Atoi(tag[:i])
	if err != nil {
		return ""
	}
	for _, x := range e.Trials {
		if x.Index == idx {
			return x.ID
		}
	}
	return ""
}

// Lineage returns the trial's ancestry under PBT, oldest first: the
// exploits of its donors (its policy log starts as a copy of its donor's)
// and then its own. It is empty for a trial that never cloned another.
func (t *Trial) Lineage() ([]Exploit, error) {
	out, err := readExploits(filepath.Join(t.Dir, "pbt_policy_"+t.ID+".txt"), t.exp)
	if err != nil {
		return nil, fmt.Errorf("lineage of trial %s: %w", t.ID, err)
	}
	return out, nil
}

// Exploits returns every exploit of a PBT or PB2 experiment in the order
// they happened, from its global policy log (pbt.GlobalLog); none for
// other experiments.
func (e *Experiment) Exploits() ([]Exploit, error) {
	out, err := readExploits(filepath.Join(e.Dir, pbt.GlobalLog), e)
	if err != nil {
		return nil, fmt.Errorf("exploits of %s: %w", e.Dir, err)
	}
	return out, nil
}

// readExploits reads a PBT policy log; a missing file has no exploits. Tags
// are resolved to trial ids in e, when e is not nil.
func readExploits(path string, e *Experiment) ([]Exploit, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Exploit
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var row []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil || len(row) != 6 {
			continue // a torn line from a crash
		}
		var x Exploit
		if json.Unmarshal(row[0], &x.Target) != nil || json.Unmarshal(row[1], &x.Donor) != nil ||
			json.Unmarshal(row[2], &x.TargetIteration) != nil || json.Unmarshal(row[3], &x.DonorIteration) != nil ||
			json.Unmarshal(row[4], &x.DonorConfig) != nil || json.Unmarshal(row[5], &x.Config) != nil {
			continue
		}
		x.TargetID, x.DonorID = e.trialByTag(x.Target), e.trialByTag(x.Donor)
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Step is one segment of a hyperparameter schedule: from training
// iteration From on, the trial trained with Config.
type Step struct {
	From   int
	Config hone.Config
}

// Schedule returns the configurations the trial's lineage trained with
// over time: the first donor's configuration from iteration 0, then each
// exploit's new configuration from the donor iteration it resumed at. For
// a trial that never cloned another, one step with its own configuration.
func (t *Trial) Schedule() ([]Step, error) {
	lin, err := t.Lineage()
	if err != nil {
		return nil, err
	}
	if len(lin) == 0 {
		return []Step{{From: 0, Config: t.Config}}, nil
	}
	steps := []Step{{From: 0, Config: lin[0].DonorConfig}}
	for _, e := range lin {
		steps = append(steps, Step{From: e.DonorIteration, Config: e.Config})
	}
	return steps, nil
}
