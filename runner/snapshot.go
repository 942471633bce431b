package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
	"github.com/hone-tune/hone/internal/journal"
)

// Journal snapshots (compaction). While an experiment runs, the runner
// writes a snapshot of the controller beside the journal each time the
// journal has grown, since the last one, by at least snapGrowth times that
// snapshot's size and snapMinBytes, and once more when a session ends
// with a journal grown by snapEndBytes and a sixteenth of the last
// snapshot. A resume then restores the newest snapshot that serves and
// replays only the journal's lines after it; it
// falls back to the one before, then to replaying the whole journal, when
// a snapshot does not read, does not belong to the journal as it is, or
// cannot be restored under the experiment (see journal.OpenSnapshot). The
// journal stays complete: snapshots only shorten the replay.
//
// A snapshot is taken between two inputs, once the actions of the last
// one are carried out, and only at a point that a replay of the journal's
// first bytes reaches exactly:
//   - every result journaled before it is safe in the buffered callbacks'
//     files (the journal's last "flushed" record follows it), so a resume
//     has none of the snapshot's results to hand back to them;
//   - the journal is durable up to it (journal.Writer.Mark).
//
// Its body is
//
//	uvarint  snapBodyVersion
//	uvarint  number of trials with counts, then for each: uvarint length, id, uvarint results
//	         the controller's state in its binary form (controller.RestoreBinaryKeeping) to the end
//
// where the counts are how many results each trial that is not
// TERMINATED has reported in the journal so far (a resume's recovery of
// the buffered callbacks' rows counts from them; a TERMINATED trial
// reports no more).

const (
	// snapMinBytes is how far the journal grows before its first
	// snapshot, and at least between two.
	snapMinBytes = 1 << 20
	// snapGrowth: the journal grows by at least this many times the last
	// snapshot's size before the next one, so that writing snapshots costs
	// a bounded share of writing the journal and a resume replays at most
	// about that much more than it reads.
	snapGrowth = 8
	// snapEndBytes and snapEndShare: the end of a session writes a
	// snapshot once the journal has grown since the last by snapEndBytes
	// and by 1/snapEndShare of that snapshot's size. A journal byte
	// replays about 4 times slower than a snapshot byte restores, so the
	// tail left then adds at most about a quarter to the next resume.
	snapEndBytes = 64 << 10
	snapEndShare = 16
	// resumeWeight is how many journal bytes a resume input counts for,
	// per trial, towards the next snapshot: its replay visits every trial,
	// so a journal grown by a few lines over several resumes replays
	// slower than its size says.
	resumeWeight = 8
	// snapBodyVersion is the version of the runner's part of a snapshot.
	snapBodyVersion = 2
)

// snapshotDue reports whether a snapshot is due, the journal having grown
// since the last by at least least bytes and by snapGrowth times the last
// snapshot's size (at the end of a session, 1/snapEndShare of it), and
// can be taken now.
func (r *runner) snapshotDue(least int64, atEnd bool) bool {
	if r.opts.NoSnapshots || r.snapBroken {
		return false
	}
	if len(r.buffered) > 0 && (r.unmarked || r.flushFailed) {
		return false
	}
	grown := r.jw.Offset() - r.snapAt + r.snapDebt
	if r.opts.snapEvery > 0 {
		return grown >= r.opts.snapEvery
	}
	if atEnd {
		return grown >= least && grown >= r.snapSize/snapEndShare
	}
	return grown >= least && grown >= snapGrowth*r.snapSize
}

// writeSnapshot takes a snapshot of the controller and has it written:
// by a goroutine of its own while the experiment runs (wait, false), or
// before it returns (wait, true; the end of a session). A snapshot still
// being written defers the next until it is done. A snapshot that cannot
// be taken or written is logged and costs nothing but a longer resume;
// only the journal's own failure (Mark) is returned.
func (r *runner) writeSnapshot(wait bool) error {
	if r.snapWriting != nil && !wait {
		select {
		case <-r.snapWriting:
		default:
			return nil // the last one is still being written
		}
	}
	r.waitSnapshot()
	state, err := r.ctl.MarshalBinaryState()
	if err != nil {
		r.logf("journal snapshots are off for this session: %v", err)
		r.snapBroken = true
		return nil
	}
	body := binary.AppendUvarint(nil, snapBodyVersion)
	var counts []string
	for _, t := range r.ctl.Trials() {
		if t.Status != hone.StatusTerminated {
			if _, ok := r.results[t.ID]; ok {
				counts = append(counts, t.ID)
			}
		} else {
			delete(r.results, t.ID)
		}
	}
	body = binary.AppendUvarint(body, uint64(len(counts)))
	for _, id := range counts {
		body = binary.AppendUvarint(body, uint64(len(id)))
		body = append(body, id...)
		body = binary.AppendUvarint(body, uint64(r.results[id]))
	}
	body = append(body, state...)
	m, err := r.jw.Mark()
	if err != nil {
		return err
	}
	// The next is due once the journal has grown from here, whether or
	// not this one is written (a full disk, say: then it is tried again
	// once the journal has grown as much again).
	r.snapAt, r.snapSize, r.snapDebt = m.Offset, int64(len(body)), 0
	done := make(chan struct{})
	write := func() {
		defer close(done)
		size, err := journal.WriteSnapshot(r.jpath(), m, body, r.opts.snapKeep)
		switch {
		case size > 0 && err != nil:
			r.logf("journal snapshot: %v", err) // written; an older one could not be removed
		case err != nil:
			r.logf("journal snapshot not written (a resume replays more of the journal): %v", err)
		}
	}
	if wait {
		write()
		return nil
	}
	r.snapWriting = done
	go write()
	return nil
}

// waitSnapshot waits for the snapshot being written, if any.
func (r *runner) waitSnapshot() {
	if r.snapWriting != nil {
		<-r.snapWriting
		r.snapWriting = nil
	}
}

// decodeSnapBody splits a snapshot's body into its result counts and the
// controller's state.
func decodeSnapBody(b []byte) (map[string]int, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, nil, errors.New("truncated body")
	}
	if v != snapBodyVersion {
		return nil, nil, fmt.Errorf("body version %d, this hone reads %d", v, snapBodyVersion)
	}
	b = b[n:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, nil, errors.New("bad result counts")
	}
	b = b[n:]
	counts := make(map[string]int, count)
	for range count {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, nil, errors.New("bad result counts")
		}
		id := string(b[n : n+int(l)])
		b = b[n+int(l):]
		c, n := binary.Uvarint(b)
		if n <= 0 || c > 1<<40 {
			return nil, nil, errors.New("bad result counts")
		}
		b = b[n:]
		counts[id] = int(c)
	}
	return counts, b, nil
}

// fromSnapshot restores the controller from the newest snapshot of the
// journal that serves, and returns the journal's lines after it and the
// snapshot's result counts; it returns nil Contents when no snapshot
// serves (the whole journal is then replayed). Snapshots that do not
// serve are logged with the reason. Before restoring one, it replays the
// journal's head (checkHead): an experiment built differently is refused
// as a whole replay refuses it. settings are this session's.
func (r *runner) fromSnapshot(settings hone.Settings) (*journal.Contents, map[string]int, error) {
	if r.opts.NoSnapshots {
		return nil, nil, nil
	}
	jp := r.jpath()
	if err := journal.RemoveSnapshotLeftovers(jp); err != nil {
		r.logf("resume: %v", err)
	}
	offs, err := journal.Snapshots(jp)
	if err != nil {
		r.logf("resume: replaying the whole journal: %v", err)
		return nil, nil, nil
	}
	var fresh [][]byte // the plugins' state before anything
	for _, off := range offs {
		s, err := journal.OpenSnapshot(jp, off)
		if err != nil {
			r.logf("resume: not using %v", err)
			continue
		}
		counts, state, err := decodeSnapBody(s.Body)
		if err != nil {
			r.logf("resume: not using snapshot %s: %v", filepath.Base(s.Path), err)
			continue
		}
		j, err := journal.ReadFrom(jp, s.Offset)
		if err != nil {
			return nil, nil, err
		}
		if fresh == nil {
			if fresh, err = r.savePlugins(); err != nil {
				r.logf("resume: replaying the whole journal: %v", err)
				return nil, nil, nil
			}
			herr := r.checkHead(s.Offset, settings)
			if err := r.resetPlugins(fresh); err != nil {
				return nil, nil, err
			}
			if herr != nil {
				return nil, nil, herr
			}
		}
		ctl, err := controller.RestoreBinaryKeeping(r.exp, r.opts.Pool, state)
		if verr := s.Verify(); verr != nil {
			err = verr // what was restored from a damaged file is not used
		}
		if err != nil {
			if err := r.resetPlugins(fresh); err != nil {
				return nil, nil, err
			}
			r.logf("resume: not using snapshot %s: %v", filepath.Base(s.Path), err)
			continue
		}
		r.logf("resume: restored %s; replaying the %d journal lines after it", filepath.Base(s.Path), len(j.Lines))
		r.ctl = ctl
		r.snapAt, r.snapSize = s.Offset, int64(len(s.Body)) // about the file's size
		return j, counts, nil
	}
	return nil, nil, nil
}

const (
	// headTrials is how many of the journal's first trials a resume from
	// a snapshot checks by replaying the journal's head.
	headTrials = 8
	// headBytes bounds the head read for that check.
	headBytes = 128 << 10
)

// checkHead replays the start of the journal, up to offset end and
// headBytes, into a controller of its own, and checks that the first
// headTrials trials it adds are the journal's (sameTrials). A resume from
// a snapshot replays only the journal's tail, so without this an
// experiment built differently (another search space, say) would go on
// from the snapshot instead of being refused as a whole replay refuses it.
// It uses the experiment's plugins: the caller puts them back after.
func (r *runner) checkHead(end int64, settings hone.Settings) error {
	h, err := journal.ReadHead(r.jpath(), min(end, headBytes))
	if err != nil {
		return err
	}
	ctl, err := controller.New(r.exp, r.opts.Pool)
	if err != nil {
		return err
	}
	if err := replaySettings(ctl, h.Header, settings); err != nil {
		return err
	}
	checked := 0
	for i, l := range h.Lines {
		if l.Event == nil {
			continue
		}
		ctl.Step(*l.Event)
		acts := ctl.Ready()
		if err := sameTrials(h.Lines[i+1:], acts, func() int { return h.LineNumber(i) }); err != nil {
			return fmt.Errorf("%s holds a different experiment: %w; resume it with the spec and the hone version it was started with (another version may decide otherwise: the choices of searcher and scheduler auto and the fidelity check have changed between versions), or start a new experiment directory", r.opts.Dir, err)
		}
		for k := range acts {
			if acts[k].Kind == controller.ActRecord && acts[k].Record.Op == "trial" {
				checked++
			}
		}
		if checked >= headTrials {
			break
		}
	}
	return nil
}

// savePlugins returns the states of the experiment's plugins that keep
// one (hone.Stateful), to put them back with resetPlugins.
func (r *runner) savePlugins() ([][]byte, error) {
	plugins := r.plugins()
	saved := make([][]byte, len(plugins))
	for i, p := range plugins {
		if p == nil {
			continue
		}
		s, ok := p.(hone.Stateful)
		if !ok {
			return nil, fmt.Errorf("the %T does not implement hone.Stateful", p)
		}
		b, err := s.MarshalState()
		if err != nil {
			return nil, fmt.Errorf("save the state of the %T: %w", p, err)
		}
		saved[i] = b
	}
	return saved, nil
}

// resetPlugins puts the experiment's plugins back in the states
// savePlugins returned. Its error ends the resume: the journal could not
// be replayed into them either.
func (r *runner) resetPlugins(saved [][]byte) error {
	for i, p := range r.plugins() {
		if saved[i] == nil {
			continue
		}
		if err := p.(hone.Stateful).UnmarshalState(saved[i]); err != nil {
			return fmt.Errorf("put the %T back in its state before the resume: %w", p, err)
		}
	}
	return nil
}

// plugins returns the experiment's scheduler (nil for the default),
// searcher and stoppers.
func (r *runner) plugins() []any {
	ps := []any{r.exp.Scheduler, r.exp.Searcher}
	for _, s := range r.exp.Stoppers {
		ps = append(ps, s)
	}
	return ps
}
