package hone

import (
	"fmt"
	"math"
	"strings"
)

// Status is the lifecycle state of a trial. Only the controller changes it.
type Status string

// The trial statuses of docs/SEMANTICS.md §1.
const (
	StatusPending    Status = "PENDING"
	StatusRunning    Status = "RUNNING"
	StatusPaused     Status = "PAUSED"
	StatusTerminated Status = "TERMINATED"
	StatusError      Status = "ERROR"
)

// Finished reports whether s is a final status (TERMINATED or ERROR).
func (s Status) Finished() bool { return s == StatusTerminated || s == StatusError }

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusPaused, StatusTerminated, StatusError:
		return true
	}
	return false
}

// Config is one trial's hyperparameter configuration: a JSON-like tree of
// maps, slices, strings, numbers and booleans.
type Config map[string]any

// Clone returns a deep copy of c (maps and slices are copied; leaves are
// shared, which is safe for JSON-like values).
func (c Config) Clone() Config {
	if c == nil {
		return nil
	}
	return Config(cloneValue(map[string]any(c)).(map[string]any))
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case Config:
		return Config(cloneValue(map[string]any(x)).(map[string]any))
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	default:
		return v
	}
}

// Lookup returns the value at a slash- or dot-free path of nested keys, e.g.
// Lookup("model", "width").
func (c Config) Lookup(path ...string) (any, bool) {
	var cur any = map[string]any(c)
	for _, k := range path {
		m, ok := asMap(cur)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case Config:
		return map[string]any(x), true
	}
	return nil, false
}

// Resources is what one trial needs from the machine, or what a resource
// pool offers. Custom resources are named by the user (e.g. "tpu": 1).
type Resources struct {
	CPU    float64            `json:"cpu,omitempty"`
	GPU    float64            `json:"gpu,omitempty"`
	Memory int64              `json:"memory,omitempty"` // bytes
	Custom map[string]float64 `json:"custom,omitempty"`
}

// Validate reports a negative or non-finite amount.
func (r Resources) Validate() error {
	check := func(name string, v float64) error {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("resources: %s = %v: must be a finite number >= 0", name, v)
		}
		return nil
	}
	if err := check("cpu", r.CPU); err != nil {
		return err
	}
	if err := check("gpu", r.GPU); err != nil {
		return err
	}
	if r.Memory < 0 {
		return fmt.Errorf("resources: memory = %d: must be >= 0", r.Memory)
	}
	for k, v := range r.Custom {
		if err := check("custom."+k, v); err != nil {
			return err
		}
	}
	return nil
}

// String renders r compactly, e.g. "cpu=1 gpu=0.5".
func (r Resources) String() string {
	var parts []string
	if r.CPU != 0 {
		parts = append(parts, fmt.Sprintf("cpu=%g", r.CPU))
	}
	if r.GPU != 0 {
		parts = append(parts, fmt.Sprintf("gpu=%g", r.GPU))
	}
	if r.Memory != 0 {
		parts = append(parts, fmt.Sprintf("memory=%d", r.Memory))
	}
	for k, v := range r.Custom {
		parts = append(parts, fmt.Sprintf("%s=%g", k, v))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Trial is one configuration being trained. The controller owns every Trial
// and is the only writer of its fields; schedulers, searchers and callbacks
// receive pointers for reading only and must not modify or retain them past
// the call unless documented.
type Trial struct {
	ID        string    // 8 hex characters, unique in the experiment
	Index     int       // creation order, from 0
	Config    Config    // current configuration (PBT may change it)
	Tag       string    // experiment tag, e.g. "3_lr=0.01" or "3_lr=0.01@perturbed[lr=0.012]"
	Dir       string    // trial directory, relative to the experiment directory
	Status    Status    // see Status
	Resources Resources // what the trial holds while RUNNING

	LastResult *Result     // latest result, nil before the first
	Checkpoint *Checkpoint // latest registered checkpoint, nil if none
	// RestoreFrom is the checkpoint the next start restores from: the
	// trial's own latest, or a donor's assigned by an exploit. It is pinned.
	RestoreFrom *Checkpoint

	Failures int    // failures so far (each retried failure counts)
	Error    string // last error text, if any

	// Saving is the save in flight, or nil.
	Saving *SaveFuture
}

// String returns the trial id.
func (t *Trial) String() string { return t.ID }

// Flatten calls fn for every leaf of a nested JSON-like value (maps of type
// map[string]any or Config), with its key path joined by "/" under prefix.
// A value that is not a map is itself a leaf. Map keys are visited in no
// particular order.
func Flatten(prefix string, v any, fn func(key string, leaf any)) {
	m, ok := asMap(v)
	if !ok {
		fn(prefix, v)
		return
	}
	for k, e := range m {
		if prefix != "" {
			k = prefix + "/" + k
		}
		Flatten(k, e, fn)
	}
}
