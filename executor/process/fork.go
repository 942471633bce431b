package process

import (
	"errors"
	"runtime"
	"sync"
)

// forker starts the trial processes from one goroutine locked to its
// thread. Linux sends a trial's parent-death signal when the thread that
// forked it ends, and a thread ends when a goroutine locked to it
// returns: forking from an arbitrary goroutine's thread would let any
// code of the process that locks a thread and returns kill trials. The
// forker's thread runs nothing else until close, which comes after every
// trial has been reaped.
type forker struct {
	mu     sync.Mutex
	reqs   chan func()
	closed bool
}

var errForkerClosed = errors.New("executor closed")

// do runs f on the forker's thread and returns when it has.
func (f *forker) do(fn func()) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errForkerClosed
	}
	if f.reqs == nil {
		f.reqs = make(chan func())
		go f.loop(f.reqs)
	}
	done := make(chan struct{})
	f.reqs <- func() {
		defer close(done)
		fn()
	}
	<-done
	return nil
}

// loop runs requests until reqs is closed, on its thread alone.
func (f *forker) loop(reqs chan func()) {
	runtime.LockOSThread()
	// No process it started is left when reqs is closed: the thread may
	// serve others again.
	defer runtime.UnlockOSThread()
	for fn := range reqs {
		fn()
	}
}

// close ends the forker's goroutine; call it once no process it started
// is running. A later do fails.
func (f *forker) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	if f.reqs != nil {
		close(f.reqs)
	}
}
