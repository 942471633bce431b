package pbt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/scheduler/fifo"
)

// Replay replays the schedule of a PBT policy log (pbt_policy_<id>.txt) on
// one trial: it starts from the configuration the logged lineage began
// with and, at each logged step, saves, pauses, switches to the logged
// configuration, and resumes (Ray Tune's PopulationBasedTrainingReplay).
// Use it with num_samples 1; other trials are left alone.
type Replay struct {
	fifo.Base

	initial hone.Config
	changes []change
	next    int
	trial   string // the trial being replayed
	tag     string // its original experiment tag
}

type change struct {
	at  int // training_iteration at which to switch
	cfg hone.Config
}

// NewReplay reads a policy log: one JSON array per line, [target_tag,
// donor_tag, target_iteration, donor_iteration, donor_config, new_config].
func NewReplay(path string) (*Replay, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pbt replay: %w", err)
	}
	return ParseReplay(data)
}

// ParseReplay builds a Replay from the contents of a policy log. Walking
// the log back from its last line, it keeps the chain of exploits that led
// to the final configuration (an earlier line whose target is not the
// later line's donor was overwritten and is dropped).
func ParseReplay(data []byte) (*Replay, error) {
	type row struct {
		target, donor         string
		targetIter, donorIter int
		donorCfg, newCfg      hone.Config
	}
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil || len(raw) != 6 {
			return nil, fmt.Errorf("pbt replay: line %d: want [target_tag, donor_tag, target_iteration, donor_iteration, donor_config, new_config]", n)
		}
		var r row
		errs := []error{json.Unmarshal(raw[0], &r.target), json.Unmarshal(raw[1], &r.donor),
			json.Unmarshal(raw[2], &r.targetIter), json.Unmarshal(raw[3], &r.donorIter),
			json.Unmarshal(raw[4], &r.donorCfg), json.Unmarshal(raw[5], &r.newCfg)}
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("pbt replay: line %d: %w", n, err)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pbt replay: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("pbt replay: the policy log is empty")
	}
	rp := &Replay{}
	lastDonor := ""
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		if lastDonor != "" && r.target != lastDonor {
			break // the chain ends: earlier changes were overwritten
		}
		lastDonor = r.donor
		rp.initial = r.donorCfg
		rp.changes = append([]change{{at: r.donorIter, cfg: r.newCfg}}, rp.changes...)
	}
	return rp, nil
}

// Config is the configuration the replay starts from.
func (r *Replay) Config() hone.Config { return r.initial.Clone() }

// Changes returns the schedule: the training iteration of each switch and
// the configuration switched to.
func (r *Replay) Changes() ([]int, []hone.Config) {
	var at []int
	var cfgs []hone.Config
	for _, c := range r.changes {
		at = append(at, c.at)
		cfgs = append(cfgs, c.cfg.Clone())
	}
	return at, cfgs
}

// OnTrialAdd gives the first trial the replay's initial configuration.
func (r *Replay) OnTrialAdd(c hone.Control, t *hone.Trial) {
	if r.trial != "" {
		return
	}
	r.trial, r.tag = t.ID, t.Tag
	c.SetConfig(t, r.Config(), "")
}

// OnResult switches the configuration at each logged step: save, pause,
// set the new configuration; FIFO resumes the trial from its checkpoint.
func (r *Replay) OnResult(c hone.Control, t *hone.Trial, res *hone.Result) hone.Decision {
	if t.ID != r.trial || r.next >= len(r.changes) {
		return hone.Continue
	}
	ch := r.changes[r.next]
	if res.TrainingIteration < ch.at {
		return hone.Continue
	}
	r.next++
	c.Logf("pbt replay: trial %s switches at iteration %d to %v", t.ID, res.TrainingIteration, map[string]any(ch.cfg))
	c.PauseTrial(t, true)
	c.SetConfig(t, ch.cfg.Clone(), fmt.Sprintf("%s@replay[%d]", r.tag, r.next))
	return hone.Noop
}
