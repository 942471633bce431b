// Command simtrials plays many trials of a cluster at once, cheaply, in a
// process of its own: perfbench's cluster/cpu shape starts it, and its
// process.Launcher hands it each trial hone launches. Every trial is a
// goroutine that does what a trial on a node does over the network: it
// dials hone's TCP address with the trial's token, says hello, reports
// every -every (each trial at a phase of its own within the interval),
// and waits for hone's directive after each report. hone's side (its TCP
// server, the protocol, the runner, the journal and the per-trial files)
// is real; only the trials' computing is missing.
//
// It reads commands on standard input, one a line:
//
//	start ID SOCKET TOKEN   start trial ID (HONE_TRIAL_ID), dialling SOCKET
//	                        (HONE_SOCKET, tcp://HOST:PORT) with TOKEN
//	kill ID                 end trial ID at once: close its connection
//	finish                  every trial sends its next report at once,
//	                        marked done, and exits once hone answered
//
// and writes events on standard output, one a line:
//
//	ready ID                trial ID was welcomed
//	exit ID N ok            trial ID ended well after N reports
//	exit ID N fail WHY      trial ID failed after N reports
//
// At the end of its input it ends every trial still running as kill does,
// waits for them and exits.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hone-tune/hone/wire"
)

func main() {
	every := flag.Duration("every", time.Second, "how often each trial reports")
	seed := flag.Uint64("seed", 1, "seeds each trial's phase within the report interval")
	flag.Parse()
	if *every <= 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: simtrials [-every D] [-seed N] < commands")
		os.Exit(2)
	}
	f := &fleet{every: *every, rng: rand.New(rand.NewPCG(*seed, 7)), out: bufio.NewWriter(os.Stdout),
		trials: map[string]*simTrial{}, finish: make(chan struct{})}
	if err := f.run(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "simtrials:", err)
		os.Exit(1)
	}
}

// fleet is every trial of the process.
type fleet struct {
	every time.Duration
	rng   *rand.Rand // read by run's goroutine only

	outMu sync.Mutex
	out   *bufio.Writer

	mu       sync.Mutex
	trials   map[string]*simTrial // running
	finish   chan struct{}        // closed by the finish command
	finished bool
	wg       sync.WaitGroup
}

// simTrial is one running trial.
type simTrial struct {
	id, socket, token string
	phase             time.Duration
	kill              chan struct{}
	once              sync.Once
}

// run reads commands from r until its end.
func (f *fleet) run(r io.Reader) error {
	sc := bufio.NewScanner(r)
	var err error
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 4 && fields[0] == "start":
			t := &simTrial{id: fields[1], socket: fields[2], token: fields[3],
				phase: time.Duration(f.rng.Int64N(int64(f.every))), kill: make(chan struct{})}
			f.mu.Lock()
			if _, dup := f.trials[t.id]; dup {
				f.mu.Unlock()
				err = fmt.Errorf("start %s: already running", t.id)
				break
			}
			f.trials[t.id] = t
			f.wg.Add(1)
			f.mu.Unlock()
			go f.play(t)
		case len(fields) == 2 && fields[0] == "kill":
			f.mu.Lock()
			if t := f.trials[fields[1]]; t != nil {
				t.once.Do(func() { close(t.kill) })
			}
			f.mu.Unlock()
		case len(fields) == 1 && fields[0] == "finish":
			f.mu.Lock()
			if !f.finished {
				f.finished = true
				close(f.finish)
			}
			f.mu.Unlock()
		default:
			err = fmt.Errorf("unknown command %q", sc.Text())
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = sc.Err()
	}
	f.mu.Lock()
	for _, t := range f.trials {
		t.once.Do(func() { close(t.kill) })
	}
	f.mu.Unlock()
	f.wg.Wait()
	f.outMu.Lock()
	defer f.outMu.Unlock()
	if ferr := f.out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// say writes one event line.
func (f *fleet) say(format string, args ...any) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	fmt.Fprintf(f.out, format+"\n", args...)
	_ = f.out.Flush()
}

// play runs trial t to its end and says how it ended.
func (f *fleet) play(t *simTrial) {
	defer f.wg.Done()
	n, err := f.trial(t)
	f.mu.Lock()
	delete(f.trials, t.id)
	f.mu.Unlock()
	if err != nil {
		f.say("exit %s %d fail %s", t.id, n, strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	f.say("exit %s %d ok", t.id, n)
}

// trial speaks the protocol for t and returns how many reports it sent.
func (f *fleet) trial(t *simTrial) (int, error) {
	conn, err := wire.Dial(t.socket)
	if err != nil {
		return 0, err
	}
	killed := make(chan struct{})
	go func() {
		select {
		case <-t.kill:
			conn.Close()
		case <-killed:
		}
	}()
	defer close(killed)
	defer conn.Close()
	r := wire.NewReader(conn)
	w := bufio.NewWriter(conn)
	send := func(m wire.Message) error {
		line, err := wire.Encode(m)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		return w.Flush()
	}
	receive := func(want string) (wire.Message, error) {
		line, err := r.ReadLine()
		if err != nil {
			return wire.Message{}, err
		}
		m, err := wire.Decode(line)
		if err != nil {
			return m, err
		}
		if m.Type == wire.TypeError {
			return m, fmt.Errorf("hone refused: %s", m.Message)
		}
		if m.Type != want {
			return m, fmt.Errorf("hone sent %s, want %s", m.Type, want)
		}
		return m, nil
	}
	if err := send(wire.Message{Type: wire.TypeHello, V: wire.Version, Token: t.token, TrialID: t.id}); err != nil {
		return 0, err
	}
	if _, err := receive(wire.TypeWelcome); err != nil {
		return 0, err
	}
	f.say("ready %s", t.id)
	timer := time.NewTimer(t.phase)
	defer timer.Stop()
	n := 0
	for {
		done := false
		select {
		case <-timer.C:
			timer.Reset(f.every)
		case <-f.finish:
			done = true
		case <-t.kill:
			return n, nil
		}
		n++
		err := send(wire.Message{Type: wire.TypeReport, Metrics: map[string]any{"loss": 1 / float64(n), "step": n}, Done: done})
		if err != nil {
			return n, err
		}
		m, err := receive(wire.TypeDirective)
		if err != nil {
			return n, err
		}
		if done || m.Action == wire.ActionStop {
			return n, nil
		}
	}
}
