package controller

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/internal/snapshot"
)

// The binary form of a controller's snapshot (MarshalBinaryState,
// RestoreBinary) holds what the JSON form holds, ctlState field for field,
// in a compact layout that reads without reflection:
//
//	magic "\x89HONECTL", format version (uvarint)
//	config: seed, the objectives (metric, mode)
//	state:  the settings, the random sources, the clock, the flags, the
//	        resources in use, the GPUs' free shares, the counts, the pins,
//	        the scheduler's, searcher's and stoppers' own snapshots
//	        (length-prefixed bytes), then the trials, each with its
//	        result, manager and run
//
// Integers are varints (encoding/binary), unsigned ones uvarints; a
// string is its length and bytes; a float64 is its 8 bytes (little
// endian), so NaN and the infinities are exact; a byte string (the random
// sources, the plugins' snapshots) is its length and bytes. Booleans and
// which optional parts are present are the bits of one uvarint per
// record. A time is a uvarint: 0 for the zero time, else 2 plus the
// zigzag of its Unix nanoseconds less the snapshot's Now (1 and 8 bytes
// of Unix nanoseconds when that does not fit). Map keys, statuses and
// host names are interned: a uvarint 2n+1 is the nth such string already
// read, 2n a new one of n bytes. A checkpoint is a uvarint too: 0
// for none, 1 for a new one whose fields follow, n+2 for the nth one
// already read, so equal checkpoints, written once, are one pointer
// again after a restore as in the JSON form. Maps are written by key, so
// a state has one binary form.
//
// A configuration value (a trial's configuration, a metric that is not a
// float64) is a tag byte and its data: nil, false, true, a string, an
// integer (int or int64, read as int), a float64 (finite, except a
// metric's own value), a list, a map (keys and values). It reads back
// with the Go types the JSON form gives.
//
// The format version changes with any change of the layout; a change of
// ctlState changes it as well as stateVersion.
const (
	binaryMagic   = "\x89HONECTL"
	binaryVersion = 1
)

// maxDepth bounds the nesting of configuration values, as encoding/json
// bounds the JSON form's.
const maxDepth = 10000

// Bits of the state's flags.
const (
	sfBegan = 1 << iota
	sfEndSent
	sfSearchDone
	sfSearchFailed
	sfStopping
	sfBudgetUsed
	sfInterrupted
	sfMetricSeen
	sfFatal
	sfResources // Settings.Resources is set
	sfFailFast
	sfStartsAnnounced
	sfSpareIDs
	sfAll = 1<<iota - 1
)

// Bits of a trial's flags.
const (
	tfSaving = 1 << iota
	tfInterrupt
	tfWarnedMetric
	tfWarnedScratch
	tfExplicitPin
	tfRestartedSincePin
	tfConfig // the configuration is not nil
	tfResult
	tfResultDone
	tfManager
	tfRun
	tfWatched
	tfAll = 1<<iota - 1
)

// Tags of configuration values.
const (
	vNil = iota
	vFalse
	vTrue
	vString
	vInt
	vFloat
	vList
	vMap
)

// MarshalBinaryState returns the controller's snapshot in the binary form
// (see the comment on binaryMagic): the same state as MarshalState, for
// files that are read back often and fast. It has the preconditions of
// MarshalState and refuses what MarshalState refuses.
func (c *Controller) MarshalBinaryState() ([]byte, error) {
	st, err := c.gather(false)
	if err != nil {
		return nil, err
	}
	size := 64 + 200*len(c.trials) + len(st.Scheduler) + len(st.Searcher)
	for _, s := range st.Stoppers {
		size += len(s)
	}
	e := &encoder{b: make([]byte, 0, size), keys: map[string]uint64{}}
	e.b = append(e.b, binaryMagic...)
	e.b = binary.AppendUvarint(e.b, binaryVersion)
	e.config(c.snapConfig())
	e.state(st)
	e.uvarint(uint64(len(c.trials)))
	// The trials go in batches: each step of a batch reads what it needs
	// of every trial of the batch before the next step (their states,
	// their maps' entries, the values), so that the memory those reads
	// wait for is fetched for many trials at once.
	var (
		ts    [batch]trialState
		parts [batch]trialParts
		maps  [batch]trialMaps
		// The keys of the last configuration and metrics written: most
		// trials' are the same.
		configKeys, metricKeys []string
	)
	for from := 0; from < len(c.trials); from += batch {
		n := min(batch, len(c.trials)-from)
		e.touched += touchTrials(c.trials[from:from+n], c.states[from:from+n])
		for j := range n {
			if err := c.trialState(from+j, &ts[j], &parts[j]); err != nil {
				return nil, err
			}
		}
		e.kvs = e.kvs[:0]
		for j := range n {
			maps[j].config = e.entriesLike(ts[j].Config, &configKeys)
			maps[j].metrics = nil
			if r := ts[j].LastResult; r != nil {
				maps[j].metrics = e.entriesLike(r.values, &metricKeys)
			}
		}
		e.touched += touch(ts[:n], maps[:n])
		for j := range n {
			if err := e.trial(&ts[j], &maps[j]); err != nil {
				return nil, fmt.Errorf("controller state: trial %s: %w", ts[j].ID, err)
			}
		}
	}
	return e.b, nil
}

// batch is the number of trials MarshalBinaryState takes at a time.
const batch = 32

// trialMaps are a trial's configuration's and last metrics' entries, by
// key.
type trialMaps struct{ config, metrics []kv }

// touchTrials reads a word of each part of the trials that trialState
// reads: their first and last, their states, their last results and the
// sizes of their maps.
func touchTrials(trials []*hone.Trial, states []*tstate) int {
	n := 0
	for i, t := range trials {
		n += len(t.ID) + t.Failures + int(states[i].life) + len(t.Config)
		if r := t.LastResult; r != nil {
			n += len(r.TrialID) + len(r.Metrics) + len(r.Hostname)
		}
	}
	return n
}

// touch reads a little of what writing each of ts reads: the first bytes
// of its strings and its maps' float values. The caller keeps the sum it
// returns, so that the reads are made.
func touch(ts []trialState, maps []trialMaps) int {
	n := 0
	for i := range ts {
		t := &ts[i]
		if t.Tag != "" {
			n += int(t.Tag[0])
		}
		if t.Dir != "" {
			n += int(t.Dir[0]) + int(t.Dir[len(t.Dir)-1])
		}
		for _, kv := range maps[i].config {
			if f, ok := kv.v.(float64); ok && f > 0 {
				n++
			}
		}
		for _, kv := range maps[i].metrics {
			if f, ok := kv.v.(float64); ok && f > 0 {
				n++
			}
		}
	}
	return n
}

// RestoreBinary is Restore for a snapshot MarshalBinaryState took: the
// same contract (exp as the experiment the snapshot was taken under, with
// fresh plugins; pool replaced by the snapshot's settings), the same
// checks, and a snapshot of another format version, of another
// experiment, or that does not read (truncated, corrupt, with bytes after
// its end) refused with an error saying why.
func RestoreBinary(exp *hone.Experiment, pool hone.Resources, data []byte) (*Controller, error) {
	return restoreBinary(exp, pool, string(data))
}

// RestoreBinaryKeeping is RestoreBinary without a copy of data: the
// restored controller's strings (ids, tags, directories, configuration
// keys) are its bytes, so the caller must never change data afterwards.
// A resume reading a snapshot file saves the copy of the whole file this
// way.
func RestoreBinaryKeeping(exp *hone.Experiment, pool hone.Resources, data []byte) (*Controller, error) {
	return restoreBinary(exp, pool, unsafe.String(unsafe.SliceData(data), len(data)))
}

func restoreBinary(exp *hone.Experiment, pool hone.Resources, data string) (*Controller, error) {
	c, err := New(exp, pool)
	if err != nil {
		return nil, err
	}
	d := &decoder{s: data}
	if err := d.header(c.snapConfig()); err != nil {
		return nil, err
	}
	var st ctlState
	d.state(&st)
	n := d.count()
	if n == 0 && d.err == nil && d.i != len(d.s) {
		d.fail("%d bytes after the last trial", len(d.s)-d.i)
	}
	if d.err != nil {
		return nil, fmt.Errorf("controller state: %w", d.err)
	}
	d.n = n
	d.cpb.size = max(min(n, 1024), 1)
	if err := c.build(&st, n, d.next, sharedCheckpoint); err != nil {
		return nil, err
	}
	return c, nil
}

// sharedCheckpoint is build's ckpt for the binary form, whose reader
// shares equal checkpoints itself.
func sharedCheckpoint(s *checkpoint) *hone.Checkpoint {
	if s == nil {
		return nil
	}
	return s.cp
}

// bits returns a word whose bit i is on[i], in the order of the flags'
// constants.
func bits(on ...bool) uint64 {
	var w uint64
	for i, b := range on {
		if b {
			w |= 1 << i
		}
	}
	return w
}

// encoder writes the binary form.
type encoder struct {
	b    []byte
	base int64             // times are written relative to it (Now)
	keys map[string]uint64 // interned strings by number
	cps  map[checkpoint]uint64
	sort []string // scratch for map keys
	kvs  []kv     // scratch for maps' entries

	touched int // what touch read
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) int(v int)        { e.b = binary.AppendVarint(e.b, int64(v)) }

func (e *encoder) float(f float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f))
}

func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bytes(s []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// key writes an interned string.
func (e *encoder) key(s string) {
	if n, ok := e.keys[s]; ok {
		e.uvarint(n<<1 | 1)
		return
	}
	e.keys[s] = uint64(len(e.keys))
	e.uvarint(uint64(len(s)) << 1)
	e.b = append(e.b, s...)
}

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	n := t.UnixNano()
	d := n - e.base // wraps; the reader adds it back the same way
	z := uint64(d<<1) ^ uint64(d>>63)
	if z > math.MaxUint64-2 {
		e.b = append(e.b, 1)
		e.b = binary.LittleEndian.AppendUint64(e.b, uint64(n))
		return
	}
	e.uvarint(z + 2)
}

func (e *encoder) checkpoint(cp *checkpoint) {
	if cp == nil {
		e.b = append(e.b, 0)
		return
	}
	if n, ok := e.cps[*cp]; ok {
		e.uvarint(n + 2)
		return
	}
	if e.cps == nil {
		e.cps = map[checkpoint]uint64{}
	}
	e.cps[*cp] = uint64(len(e.cps))
	e.b = append(e.b, 1)
	e.str(cp.TrialID)
	e.int(cp.Index)
	e.str(cp.Path)
	e.int(cp.Iteration)
	e.float(float64(cp.TimeTotal))
}

func (e *encoder) config(cfg snapConfig) {
	e.uvarint(cfg.Seed)
	e.uvarint(uint64(len(cfg.Objectives)))
	for _, o := range cfg.Objectives {
		e.str(o.Metric)
		e.str(string(o.Mode))
	}
}

func (e *encoder) hresources(r hone.Resources) {
	e.float(r.CPU)
	e.float(r.GPU)
	e.varint(r.Memory)
	e.uvarint(uint64(len(r.Custom)))
	from := len(e.sort)
	for _, k := range keysOf(e, r.Custom) {
		e.key(k)
		e.float(r.Custom[k])
	}
	e.sort = e.sort[:from]
}

func (e *encoder) resources(r *resources) {
	e.float(float64(r.CPU))
	e.float(float64(r.GPU))
	e.varint(r.Memory)
	e.uvarint(uint64(len(r.Custom)))
	if len(r.Custom) == 0 {
		return
	}
	from := len(e.sort)
	for _, k := range keysOf(e, r.Custom) {
		e.key(k)
		e.float(float64(r.Custom[k]))
	}
	e.sort = e.sort[:from]
}

// kv is an entry of a map.
type kv struct {
	k string
	v any
}

// entries appends m's entries to e.kvs and returns them by key; the caller
// truncates e.kvs again.
func (e *encoder) entries(m map[string]any) []kv {
	from := len(e.kvs)
	for k, v := range m {
		e.kvs = append(e.kvs, kv{k, v})
	}
	s := e.kvs[from:]
	if len(s) > 1 {
		slices.SortFunc(s, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	}
	return s
}

// entriesLike is entries for a map whose keys are likely to be keys, by
// key: then it looks them up, which is faster than iterating over the map.
// Otherwise it sets keys to m's.
func (e *encoder) entriesLike(m map[string]any, keys *[]string) []kv {
	from := len(e.kvs)
	if len(m) > 0 && len(m) == len(*keys) {
		for _, k := range *keys {
			v, ok := m[k]
			if !ok {
				break
			}
			e.kvs = append(e.kvs, kv{k, v})
		}
		if len(e.kvs)-from == len(m) {
			return e.kvs[from:] // m has keys and no other
		}
		e.kvs = e.kvs[:from]
	}
	s := e.entries(m)
	*keys = (*keys)[:0]
	for _, kv := range s {
		*keys = append(*keys, kv.k)
	}
	return s
}

// keysOf appends m's keys to e.sort and returns them sorted; the caller
// truncates e.sort again.
func keysOf[M ~map[string]V, V any](e *encoder, m M) []string {
	from := len(e.sort)
	for k := range m {
		e.sort = append(e.sort, k)
	}
	keys := e.sort[from:]
	slices.Sort(keys)
	return keys
}

// state writes everything but the trials.
func (e *encoder) state(st *ctlState) {
	// Now first, absolute: the other times are relative to it.
	e.time(st.Now.t)
	if !st.Now.t.IsZero() {
		e.base = st.Now.t.UnixNano()
	}
	s := &st.Settings
	e.uvarint(bits(
		st.Began, st.EndSent, st.SearchDone, st.SearchFailed,
		st.Stopping, st.BudgetUsed, st.Interrupted, st.MetricSeen,
		st.Fatal != nil, s.Resources != nil, s.Failure.FailFast,
		s.StartsAnnounced, s.SpareIDs))
	e.hresources(s.Pool)
	if s.Resources != nil {
		e.hresources(*s.Resources)
	}
	e.int(s.MaxConcurrentTrials)
	e.int(s.MaxPendingTrials)
	e.int(s.Failure.MaxFailures)
	e.varint(int64(s.TrialTimeout))
	e.varint(int64(s.ReportTimeout))

	e.bytes(st.IDRng)
	e.bytes(st.SchedRng)
	e.str(st.SpareID)
	e.time(st.LastSeen.t)
	e.time(st.SessionStart.t)
	e.varint(int64(st.Spent))
	e.resources(&st.Used)
	e.uvarint(uint64(len(st.GPUFree)))
	for _, f := range st.GPUFree {
		e.float(float64(f))
	}
	e.int(st.Live)
	e.int(st.NPending)
	e.int(st.NPaused)
	e.str(st.StopReason)
	if st.Fatal != nil {
		e.str(*st.Fatal)
	}
	e.uvarint(uint64(len(st.Pins)))
	from := len(e.sort)
	for _, p := range keysOf(e, st.Pins) {
		e.str(p)
		e.int(st.Pins[p])
	}
	e.sort = e.sort[:from]
	e.bytes(st.Scheduler)
	e.bytes(st.Searcher)
	e.uvarint(uint64(len(st.Stoppers)))
	for _, s := range st.Stoppers {
		e.bytes(s)
	}
}

// trial writes ts, whose maps' entries are in maps.
func (e *encoder) trial(ts *trialState, maps *trialMaps) error {
	flags := bits(
		ts.Saving, ts.Interrupt, ts.WarnedMetric, ts.WarnedScratch,
		ts.ExplicitPin, ts.RestartedSincePin, ts.Config != nil, ts.LastResult != nil,
		ts.LastResult != nil && ts.LastResult.Done, ts.Manager != nil, ts.Run != nil,
		ts.Run != nil && ts.Run.Watched)

	e.str(ts.ID)
	e.int(ts.Index)
	e.uvarint(flags)
	e.uvarint(uint64(ts.Life))
	e.uvarint(uint64(ts.Next))
	if ts.Config != nil {
		e.uvarint(uint64(len(maps.config)))
		if err := e.kvValues(maps.config, 1); err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
	}
	e.str(ts.Tag)
	e.str(ts.Dir)
	e.key(string(ts.Status))
	e.resources(&ts.Resources)
	e.checkpoint(ts.Checkpoint)
	e.checkpoint(ts.RestoreFrom)
	e.int(ts.Failures)
	e.str(ts.Error)
	if r := ts.LastResult; r != nil {
		e.str(r.TrialID)
		e.uvarint(uint64(len(maps.metrics)))
		if len(maps.metrics) > 0 {
			for _, m := range maps.metrics {
				k, v := m.k, m.v
				e.key(k)
				if f, ok := v.(float64); ok {
					e.b = append(e.b, vFloat)
					e.float(f)
					continue
				}
				if err := e.value(v, 1); err != nil {
					return fmt.Errorf("last result: metric %q: %w", k, err)
				}
			}
		}
		e.int(r.TrainingIteration)
		e.float(float64(r.TimeThisIter))
		e.float(float64(r.TimeTotal))
		e.float(float64(r.TimeSinceRestore))
		e.int(r.IterationsSinceRestore)
		e.time(r.Timestamp.t)
		e.int(r.PID)
		e.key(r.Hostname)
		e.checkpoint(r.Checkpoint)
	}
	if m := ts.Manager; m != nil {
		e.int(m.Next)
		e.uvarint(uint64(len(m.Entries)))
		for i := range m.Entries {
			en := &m.Entries[i]
			e.checkpoint(&en.Checkpoint)
			e.float(float64(en.Score))
			e.int(en.Seq)
		}
	}
	if r := ts.Run; r != nil {
		e.uvarint(uint64(len(r.GPUs)))
		for _, g := range r.GPUs {
			e.int(g)
		}
		e.int(r.Iter)
		e.int(r.SinceIter)
		e.float(float64(r.TimeTotal))
		e.time(r.LastTime.t)
		e.time(r.RestoredAt.t)
		e.str(r.SchedFail)
		e.time(r.StartedAt.t)
		e.time(r.LastReport.t)
		e.time(r.Deadline.t)
	}
	return nil
}

// value writes a configuration value at the given depth of nesting.
func (e *encoder) value(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("configuration value nested more than %d deep", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, vNil)
	case bool:
		if x {
			e.b = append(e.b, vTrue)
		} else {
			e.b = append(e.b, vFalse)
		}
	case string:
		e.b = append(e.b, vString)
		e.str(x)
	case int:
		e.b = append(e.b, vInt)
		e.int(x)
	case int64:
		e.b = append(e.b, vInt)
		e.varint(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("configuration value %v: only finite numbers can be saved", x)
		}
		e.b = append(e.b, vFloat)
		e.float(x)
	case []any:
		e.b = append(e.b, vList)
		e.uvarint(uint64(len(x)))
		for _, v := range x {
			if err := e.value(v, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		e.b = append(e.b, vMap)
		return e.valueMap(x, depth+1)
	case snapshot.Config:
		e.b = append(e.b, vMap)
		return e.valueMap(x, depth+1)
	case hone.Config:
		e.b = append(e.b, vMap)
		return e.valueMap(x, depth+1)
	default:
		return fmt.Errorf("configuration value %v: a %T cannot be saved", v, v)
	}
	return nil
}

// valueMap writes a map's size, then its keys and values by key.
func (e *encoder) valueMap(m map[string]any, depth int) error {
	e.uvarint(uint64(len(m)))
	from := len(e.kvs)
	err := e.kvValues(e.entries(m), depth)
	e.kvs = e.kvs[:from]
	return err
}

// kvValues writes entries' keys and values.
func (e *encoder) kvValues(kvs []kv, depth int) error {
	for _, kv := range kvs {
		e.key(kv.k)
		if err := e.value(kv.v, depth); err != nil {
			return err
		}
	}
	return nil
}

// decoder reads the binary form, from one string copy of the data: every
// string it reads is a part of it, not an allocation of its own, and it
// reads through it once, in order. Its first error sticks: reads after it
// return zero values, and the caller checks err once per record.
type decoder struct {
	s    string
	i    int
	err  error
	base int64
	keys []string
	cps  []*hone.Checkpoint
	cpb  block[hone.Checkpoint]

	// The trials: n in all, k read so far, into ts and its parts.
	n, k int
	ts   trialState
	res  resultState
	mgr  managerState
	run  runSnap
	cp   [3]checkpoint
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format+" (at byte %d)", append(args, d.i)...)
	}
	d.i = len(d.s)
}

func (d *decoder) truncated() { d.fail("the snapshot is truncated or corrupt") }

func (d *decoder) uvarint() uint64 {
	var v uint64
	for shift := uint(0); d.i < len(d.s); shift += 7 {
		c := d.s[d.i]
		d.i++
		if c < 0x80 {
			if shift == 63 && c > 1 {
				break // overflows a uint64
			}
			return v | uint64(c)<<shift
		}
		if shift == 63 {
			break
		}
		v |= uint64(c&0x7f) << shift
	}
	d.truncated()
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) int() int {
	v := d.varint()
	if int64(int(v)) != v {
		d.fail("number %d out of range", v)
		return 0
	}
	return int(v)
}

// count reads the number of elements that follow, each at least a byte.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.s)-d.i) {
		d.fail("a count of %d exceeds the snapshot", v)
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.i >= len(d.s) {
		d.truncated()
		return 0
	}
	d.i++
	return d.s[d.i-1]
}

func (d *decoder) uint64() uint64 {
	if len(d.s)-d.i < 8 {
		d.truncated()
		return 0
	}
	s := d.s[d.i : d.i+8]
	d.i += 8
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func (d *decoder) float() float64 { return math.Float64frombits(d.uint64()) }

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.truncated()
		return ""
	}
	d.i += int(n)
	return d.s[d.i-int(n) : d.i]
}

func (d *decoder) bytes() []byte { return []byte(d.str()) }

func (d *decoder) key() string {
	v := d.uvarint()
	if v&1 == 1 {
		if v>>1 >= uint64(len(d.keys)) {
			d.fail("string %d before it was read", v>>1)
			return ""
		}
		return d.keys[v>>1]
	}
	if v>>1 > uint64(len(d.s)-d.i) {
		d.truncated()
		return ""
	}
	s := d.s[d.i : d.i+int(v>>1)]
	d.i += int(v >> 1)
	d.keys = append(d.keys, s)
	return s
}

func (d *decoder) time() stamp {
	switch v := d.uvarint(); v {
	case 0:
		return stamp{}
	case 1:
		return stamp{time.Unix(0, int64(d.uint64()))}
	default:
		z := v - 2
		delta := int64(z>>1) ^ -int64(z&1)
		return stamp{time.Unix(0, d.base+delta)}
	}
}

// checkpoint reads a checkpoint reference into *into and returns into,
// or nil for none.
func (d *decoder) checkpoint(into *checkpoint) *checkpoint {
	switch v := d.uvarint(); v {
	case 0:
		return nil
	case 1:
		cp := d.cpb.new()
		cp.TrialID = d.str()
		cp.Index = d.int()
		cp.Path = d.str()
		cp.Iteration = d.int()
		cp.TimeTotal = d.float()
		d.cps = append(d.cps, cp)
		*into = checkpoint{cp.TrialID, cp.Index, cp.Path, cp.Iteration, snapshot.Number(cp.TimeTotal), cp}
		return into
	default:
		if v-2 >= uint64(len(d.cps)) {
			d.fail("checkpoint %d before it was read", v-2)
			return nil
		}
		cp := d.cps[v-2]
		*into = checkpoint{cp.TrialID, cp.Index, cp.Path, cp.Iteration, snapshot.Number(cp.TimeTotal), cp}
		return into
	}
}

// header reads the magic, the format version and the configuration, and
// checks them.
func (d *decoder) header(want snapConfig) error {
	if !strings.HasPrefix(d.s, binaryMagic) {
		if strings.HasPrefix(d.s, "{") {
			return errors.New("controller state: not the binary form (JSON? that is Restore's)")
		}
		return errors.New("controller state: not the binary form of a controller's snapshot")
	}
	d.i = len(binaryMagic)
	if v := d.uvarint(); d.err == nil && v != binaryVersion {
		return fmt.Errorf("controller state: binary form version %d, this hone reads version %d", v, binaryVersion)
	}
	var got snapConfig
	got.Seed = d.uvarint()
	for range d.count() {
		metric := d.str()
		got.Objectives = append(got.Objectives, objConfig{metric, hone.Mode(d.str())})
	}
	if d.err != nil {
		return fmt.Errorf("controller state: %w", d.err)
	}
	if !slices.Equal(got.Objectives, want.Objectives) || got.Seed != want.Seed {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		return fmt.Errorf("controller state: taken with configuration %s, this controller is configured %s", g, w)
	}
	return nil
}

func (d *decoder) hresources() hone.Resources {
	r := hone.Resources{CPU: d.float(), GPU: d.float(), Memory: d.varint()}
	if n := d.count(); n > 0 {
		r.Custom = make(map[string]float64, n)
		for range n {
			k := d.key()
			r.Custom[k] = d.float()
		}
		if len(r.Custom) != n && d.err == nil {
			d.fail("a resource named twice")
		}
	}
	return r
}

func (d *decoder) resources(r *resources) {
	*r = resources{CPU: snapshot.Number(d.float()), GPU: snapshot.Number(d.float()), Memory: d.varint()}
	if n := d.count(); n > 0 {
		r.Custom = make(map[string]snapshot.Number, n)
		for range n {
			k := d.key()
			r.Custom[k] = snapshot.Number(d.float())
		}
		if len(r.Custom) != n && d.err == nil {
			d.fail("a resource named twice")
		}
	}
}

func (d *decoder) flags(all uint64) uint64 {
	f := d.uvarint()
	if f&^all != 0 {
		d.fail("unknown flags %#x", f&^all)
	}
	return f
}

// state reads everything but the trials into st.
func (d *decoder) state(st *ctlState) {
	st.Now = d.time()
	if !st.Now.t.IsZero() {
		d.base = st.Now.t.UnixNano()
	}
	f := d.flags(sfAll)
	st.Began, st.EndSent, st.SearchDone = f&sfBegan != 0, f&sfEndSent != 0, f&sfSearchDone != 0
	st.SearchFailed, st.Stopping, st.BudgetUsed = f&sfSearchFailed != 0, f&sfStopping != 0, f&sfBudgetUsed != 0
	st.Interrupted, st.MetricSeen = f&sfInterrupted != 0, f&sfMetricSeen != 0
	s := &st.Settings
	s.Failure.FailFast, s.StartsAnnounced, s.SpareIDs = f&sfFailFast != 0, f&sfStartsAnnounced != 0, f&sfSpareIDs != 0
	s.Pool = d.hresources()
	if f&sfResources != 0 {
		r := d.hresources()
		s.Resources = &r
	}
	s.MaxConcurrentTrials = d.int()
	s.MaxPendingTrials = d.int()
	s.Failure.MaxFailures = d.int()
	s.TrialTimeout = time.Duration(d.varint())
	s.ReportTimeout = time.Duration(d.varint())

	st.IDRng = d.bytes()
	st.SchedRng = d.bytes()
	st.SpareID = d.str()
	st.LastSeen = d.time()
	st.SessionStart = d.time()
	st.Spent = time.Duration(d.varint())
	d.resources(&st.Used)
	if n := d.count(); n > 0 {
		st.GPUFree = make([]snapshot.Number, n)
		for i := range st.GPUFree {
			st.GPUFree[i] = snapshot.Number(d.float())
		}
	}
	st.Live = d.int()
	st.NPending = d.int()
	st.NPaused = d.int()
	st.StopReason = d.str()
	if f&sfFatal != 0 {
		msg := d.str()
		st.Fatal = &msg
	}
	if n := d.count(); n > 0 {
		st.Pins = make(map[string]int, n)
		for range n {
			p := d.str()
			st.Pins[p] = d.int()
		}
		if len(st.Pins) != n && d.err == nil {
			d.fail("a checkpoint pinned twice")
		}
	}
	st.Scheduler = d.bytes()
	st.Searcher = d.bytes()
	if n := d.count(); n > 0 {
		st.Stoppers = make([]json.RawMessage, n)
		for i := range st.Stoppers {
			st.Stoppers[i] = d.bytes()
		}
	}
}

// next reads the next trial, for build.
func (d *decoder) next() (*trialState, error) {
	d.k++
	ts := &d.ts
	ts.ID = d.str()
	ts.Index = d.int()
	f := d.flags(tfAll)
	life, next := d.uvarint(), d.uvarint()
	if life > math.MaxUint8 {
		d.fail("run state %d", life)
	}
	if next > math.MaxUint8 {
		d.fail("queued decision %d", next)
	}
	ts.Life, ts.Next = uint8(life), uint8(next)
	ts.Saving, ts.Interrupt = f&tfSaving != 0, f&tfInterrupt != 0
	ts.WarnedMetric, ts.WarnedScratch = f&tfWarnedMetric != 0, f&tfWarnedScratch != 0
	ts.ExplicitPin, ts.RestartedSincePin = f&tfExplicitPin != 0, f&tfRestartedSincePin != 0
	ts.Config = nil
	if f&tfConfig != 0 {
		ts.Config = d.valueMap(1)
	}
	ts.Tag = d.str()
	ts.Dir = d.str()
	ts.Status = hone.Status(d.key())
	d.resources(&ts.Resources)
	ts.Checkpoint = d.checkpoint(&d.cp[0])
	ts.RestoreFrom = d.checkpoint(&d.cp[1])
	ts.Failures = d.int()
	ts.Error = d.str()

	ts.LastResult = nil
	if f&tfResult != 0 {
		r := &d.res
		r.TrialID = d.str()
		r.values = nil
		if n := d.count(); n > 0 {
			r.values = make(map[string]any, n)
			for range n {
				k := d.key()
				r.values[k] = d.value(1, true)
			}
			if len(r.values) != n && d.err == nil {
				d.fail("a metric named twice")
			}
		}
		r.TrainingIteration = d.int()
		r.TimeThisIter = snapshot.Number(d.float())
		r.TimeTotal = snapshot.Number(d.float())
		r.TimeSinceRestore = snapshot.Number(d.float())
		r.IterationsSinceRestore = d.int()
		r.Timestamp = d.time()
		r.Done = f&tfResultDone != 0
		r.PID = d.int()
		r.Hostname = d.key()
		r.Checkpoint = d.checkpoint(&d.cp[2])
		ts.LastResult = r
	} else if f&tfResultDone != 0 {
		d.fail("a done result without the result")
	}

	ts.Manager = nil
	if f&tfManager != 0 {
		m := &d.mgr
		m.Next = d.int()
		n := d.count()
		m.Entries = slices.Grow(m.Entries[:0], n)[:n]
		for i := range m.Entries {
			e := &m.Entries[i]
			if d.checkpoint(&e.Checkpoint) == nil {
				d.fail("a kept checkpoint that is none")
			}
			e.Score = snapshot.Number(d.float())
			e.Seq = d.int()
		}
		ts.Manager = m
	}

	ts.Run = nil
	if f&tfRun != 0 {
		r := &d.run
		r.GPUs = nil
		if n := d.count(); n > 0 {
			r.GPUs = make([]int, n)
			for i := range r.GPUs {
				r.GPUs[i] = d.int()
			}
		}
		r.Iter = d.int()
		r.SinceIter = d.int()
		r.TimeTotal = snapshot.Number(d.float())
		r.LastTime = d.time()
		r.RestoredAt = d.time()
		r.SchedFail = d.str()
		r.StartedAt = d.time()
		r.LastReport = d.time()
		r.Deadline = d.time()
		r.Watched = f&tfWatched != 0
		ts.Run = r
	} else if f&tfWatched != 0 {
		d.fail("a watched run without the run")
	}

	if d.k == d.n && d.err == nil && d.i != len(d.s) {
		d.fail("%d bytes after the last trial", len(d.s)-d.i)
	}
	if d.err != nil {
		return nil, fmt.Errorf("controller state: trial %d of %d: %w", d.k, d.n, d.err)
	}
	return ts, nil
}

// value reads a configuration value at the given depth of nesting; a
// float64 may be NaN or infinite only where metric says it is a metric's
// own value.
func (d *decoder) value(depth int, metric bool) any {
	if depth > maxDepth {
		d.fail("a configuration value nested more than %d deep", maxDepth)
		return nil
	}
	switch tag := d.byte(); tag {
	case vNil:
		return nil
	case vFalse:
		return false
	case vTrue:
		return true
	case vString:
		return d.str()
	case vInt:
		return d.int()
	case vFloat:
		f := d.float()
		if !metric && (math.IsNaN(f) || math.IsInf(f, 0)) {
			d.fail("configuration value %v: only finite numbers can be saved", f)
		}
		return f
	case vList:
		l := make([]any, d.count())
		for i := range l {
			l[i] = d.value(depth+1, false)
		}
		return l
	case vMap:
		return map[string]any(d.valueMap(depth + 1))
	default:
		d.fail("configuration value of unknown type %d", tag)
		return nil
	}
}

// valueMap reads a map of configuration values.
func (d *decoder) valueMap(depth int) snapshot.Config {
	n := d.count()
	m := make(snapshot.Config, n)
	for range n {
		k := d.key()
		m[k] = d.value(depth, false)
	}
	if len(m) != n && d.err == nil {
		d.fail("configuration key named twice")
	}
	return m
}
