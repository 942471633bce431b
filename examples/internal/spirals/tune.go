package spirals

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/controller"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore the default handling for a second Ctrl-C
		fmt.Fprintln(os.Stderr, "\nstopping: trials are saving; press Ctrl-C again to stop at once")
	}()
	var out *runner.Outcome
	var err error
	if runner.Exists(opts.Dir) {
		fmt.Printf("resuming the experiment in %s\n", opts.Dir)
		out, err = runner.Resume(ctx, exp, opts, controller.ResumeFlags{Unfinished: true})
	} else {
		out, err = runner.Run(ctx, exp, opts)
	}
	if err != nil {
		return err
	}
	if out.Interrupted {
		fmt.Printf("stopped; run the same command again to resume %s\n", opts.Dir)
		return nil
	}
	res, err := results.Open(opts.Dir)
	if err != nil {
		return err
	}
	best, acc, err := res.Best("val_accuracy", hone.Max, results.ScopeAll)
	if err != nil {
		return err
	}
	fmt.Printf("best trial %s: val_accuracy=%.4f config=%v\n", best.ID, acc, map[string]any(best.Config))
	return nil
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
