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
// start with the trial's index ("<index>_<config>").
func (t *Trial) trialByTag(tag string) string {
	if t.exp == nil {
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
	for _, x := range t.exp.Trials {
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
	f, err := os.Open(filepath.Join(t.Dir, "pbt_policy_"+t.ID+".txt"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lineage of trial %s: %w", t.ID, err)
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
		var e Exploit
		if json.Unmarshal(row[0], &e.Target) != nil || json.Unmarshal(row[1], &e.Donor) != nil ||
			json.Unmarshal(row[2], &e.TargetIteration) != nil || json.Unmarshal(row[3], &e.DonorIteration) != nil ||
			json.Unmarshal(row[4], &e.DonorConfig) != nil || json.Unmarshal(row[5], &e.Config) != nil {
			continue
		}
		e.TargetID, e.DonorID = t.trialByTag(e.Target), t.trialByTag(e.Donor)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lineage of trial %s: %w", t.ID, err)
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
