package pbt

import (
	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// replayStateVersion is the version of the snapshot form of Replay's state.
const replayStateVersion = 1

// replayConfig identifies the schedule a snapshot was taken under.
type replayConfig struct {
	Initial hone.Config   `json:"initial"`
	At      []int         `json:"at"`
	Configs []hone.Config `json:"configs"`
}

type replayState struct {
	Trial string `json:"trial,omitempty"`
	Tag   string `json:"tag,omitempty"`
	Next  int    `json:"next"`
}

func (r *Replay) savedConfig() replayConfig {
	c := replayConfig{Initial: r.initial}
	for _, ch := range r.changes {
		c.At = append(c.At, ch.at)
		c.Configs = append(c.Configs, ch.cfg)
	}
	return c
}

// MarshalState implements hone.Stateful: the trial replayed and how far
// its schedule went.
func (r *Replay) MarshalState() ([]byte, error) {
	return snapshot.Marshal("pbt_replay", replayStateVersion, r.savedConfig(), replayState{r.trial, r.tag, r.next})
}

// UnmarshalState implements hone.Stateful.
func (r *Replay) UnmarshalState(data []byte) error {
	var st replayState
	if err := snapshot.Unmarshal(data, "pbt_replay", replayStateVersion, r.savedConfig(), &st); err != nil {
		return err
	}
	r.trial, r.tag, r.next = st.Trial, st.Tag, min(max(st.Next, 0), len(r.changes))
	return nil
}
