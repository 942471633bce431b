// Package snapshot is the saved form shared by hone's plugins (hone.Stateful):
// versioned JSON that names the plugin, the version of its state, and the
// configuration it was taken under, so that a snapshot is refused, with an
// error saying why, by a plugin of another kind, version or configuration.
//
// A snapshot is
//
//	{"kind": "asha", "version": 1, "config": {...}, "state": {...}}
//
// where config is what the plugin says identifies its configuration and
// state is its own data: trials by id, floats as [Number].
package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// envelope is a snapshot as written.
type envelope struct {
	Kind    string          `json:"kind"`
	Version int             `json:"version"`
	Config  json.RawMessage `json:"config,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
}

// Marshal returns the snapshot of a plugin of the given kind: version is
// the version of its state's form, config identifies its configuration
// (nil for none) and state is its data. Both are written with
// encoding/json.
func Marshal(kind string, version int, config, state any) ([]byte, error) {
	env := envelope{Kind: kind, Version: version}
	var err error
	if config != nil {
		if env.Config, err = json.Marshal(config); err != nil {
			return nil, fmt.Errorf("%s state: configuration: %w", kind, err)
		}
	}
	if state != nil {
		if env.State, err = json.Marshal(state); err != nil {
			return nil, fmt.Errorf("%s state: %w", kind, err)
		}
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("%s state: %w", kind, err)
	}
	return b, nil
}

// Unmarshal reads a snapshot that Marshal wrote for a plugin of the given
// kind and version whose configuration is config, into state (a pointer).
// It refuses a snapshot of another kind, of another version, or taken
// under another configuration.
func Unmarshal(data []byte, kind string, version int, config, state any) error {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	if env.Kind != kind {
		return fmt.Errorf("%s state: the snapshot is of %q, not %q", kind, env.Kind, kind)
	}
	if env.Version != version {
		return fmt.Errorf("%s state: version %d, this hone reads version %d", kind, env.Version, version)
	}
	var want []byte
	if config != nil {
		var err error
		if want, err = json.Marshal(config); err != nil {
			return fmt.Errorf("%s state: configuration: %w", kind, err)
		}
	}
	if got := compact(env.Config); !bytes.Equal(got, want) {
		return fmt.Errorf("%s state: taken with configuration %s, this %s is configured %s", kind, orNone(got), kind, orNone(want))
	}
	if state == nil {
		return nil
	}
	if len(env.State) == 0 {
		return fmt.Errorf("%s state: the snapshot holds no state", kind)
	}
	if err := json.Unmarshal(env.State, state); err != nil {
		return fmt.Errorf("%s state: %w", kind, err)
	}
	return nil
}

func compact(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

func orNone(b []byte) string {
	if len(b) == 0 {
		return "(none)"
	}
	return string(b)
}

// Kind returns the kind and version a snapshot names.
func Kind(data []byte) (kind string, version int, err error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return "", 0, fmt.Errorf("snapshot: %w", err)
	}
	return env.Kind, env.Version, nil
}

// Number is a float64 that survives JSON exactly, NaN (written as "NaN")
// and the infinities ("+Inf", "-Inf") included.
type Number float64

// MarshalJSON writes the shortest decimal that reads back as the same
// float64.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes, and null as NaN.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`, "null":
		*n = Number(math.NaN())
		return nil
	case `"+Inf"`:
		*n = Number(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = Number(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("bad number %s", b)
	}
	*n = Number(f)
	return nil
}

// Numbers converts floats to Numbers.
func Numbers(xs []float64) []Number {
	if xs == nil {
		return nil
	}
	out := make([]Number, len(xs))
	for i, x := range xs {
		out[i] = Number(x)
	}
	return out
}

// Floats converts Numbers to floats.
func Floats(ns []Number) []float64 {
	if ns == nil {
		return nil
	}
	out := make([]float64, len(ns))
	for i, n := range ns {
		out[i] = float64(n)
	}
	return out
}

// PCG returns the state of a PCG source, for a snapshot.
func PCG(src *rand.PCG) ([]byte, error) {
	b, err := src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("random source: %w", err)
	}
	return b, nil
}

// SetPCG restores into src a state PCG returned.
func SetPCG(src *rand.PCG, b []byte) error {
	if err := src.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("random source: %w", err)
	}
	return nil
}
