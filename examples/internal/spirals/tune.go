package spirals

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/results"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/space"
)

// Tune runs exp in opts.Dir, or resumes it if the directory already holds
// it, then prints the best trial by val_accuracy. The first Ctrl-C (or
// SIGTERM) stops gracefully — trials save and stop, and running the same
// command again resumes; a second one stops at once, which the journal
// makes safe.
func Tune(exp *hone.Experiment, opts runner.Options) error {
	ctx, stop := SignalContext()
	defer stop()
	done, err := RunOrResume(ctx, os.Stdout, exp, opts)
	if err != nil || !done {
		return err
	}
	_, _, err = PrintBest(os.Stdout, opts.Dir, results.ScopeAll)
	return err
}

// SignalContext returns a context cancelled by the first Ctrl-C (or
// SIGTERM), which also prints a notice to stderr; after it the default
// handling is restored, so that a second one stops the process at once.
// Call stop to release the signal handler; it returns once the notice, if
// any, is written.
func SignalContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		// A signal's cause is not context.Canceled itself (it only matches
		// it with errors.Is); cancel's is.
		signalled := context.Cause(ctx) != context.Canceled
		cancel() // restore the default handling for a second Ctrl-C
		if signalled {
			fmt.Fprintln(os.Stderr, "\nstopping: trials are saving; press Ctrl-C again to stop at once")
		}
	}()
	return ctx, func() {
		cancel()
		<-done
	}
}

// RunOrResume runs exp in opts.Dir, or resumes it if the directory
// already holds it, until it ends or ctx is cancelled; it writes what it
// does to w. It reports whether the experiment finished: false means it
// was interrupted (trials saved and stopped) and calling it again with the
// same exp and opts resumes it.
func RunOrResume(ctx context.Context, w io.Writer, exp *hone.Experiment, opts runner.Options) (done bool, err error) {
	var out *runner.Outcome
	if runner.Exists(opts.Dir) {
		fmt.Fprintf(w, "resuming the experiment in %s\n", opts.Dir)
		out, err = runner.Resume(ctx, exp, opts, hone.ResumeFlags{Unfinished: true})
	} else {
		out, err = runner.Run(ctx, exp, opts)
	}
	if err != nil {
		return false, err
	}
	if out.Interrupted {
		fmt.Fprintf(w, "stopped; run the same command again to resume %s\n", opts.Dir)
		return false, nil
	}
	return true, nil
}

// PrintBest opens the experiment in dir, writes its best trial by
// val_accuracy to w and returns both. scope says which results of a trial
// count (results.ScopeAll: its best one; results.ScopeLast: its last one).
func PrintBest(w io.Writer, dir, scope string) (*results.Experiment, *results.Trial, error) {
	res, err := results.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	best, acc, err := res.Best(hone.Objective{Metric: "val_accuracy", Mode: hone.Max}, scope)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(w, "best trial %s: val_accuracy=%.4f config=%v\n", best.ID, acc, map[string]any(best.Config))
	return res, best, nil
}

// Space is the search space the Go examples tune: the learning rate, the
// momentum, the width of the hidden layer and the batch size.
func Space() space.Space {
	return space.Space{
		"lr":         space.LogUniform(1e-3, 1),
		"momentum":   space.Uniform(0, 0.95),
		"hidden":     space.Choice(4, 16, 64),
		"batch_size": space.Choice(16, 64),
	}
}
