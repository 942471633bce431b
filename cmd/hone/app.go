package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/spec"
)

// version is the release version, set with -ldflags "-X main.version=v1.2.3";
// when empty, the module version from the build information is shown, or
// else hone.Version.
var version string

// app is one invocation of the CLI: where it writes, how it makes
// executors, and whether it handles signals (only the real binary does).
type app struct {
	stdout, stderr io.Writer
	// newExecutor makes the executor that runs the trials of a plan.
	newExecutor func(p spec.Process) (hone.Executor, error)
	// handleSignals makes run and resume stop gracefully on the first
	// SIGINT, SIGTERM or SIGHUP and exit at once on the second.
	handleSignals bool
	// dashLn, when set, is where run and resume serve the experiment's
	// dashboard (--dashboard).
	dashLn net.Listener
}

func newApp(stdout, stderr io.Writer) *app {
	return &app{stdout: stdout, stderr: stderr, newExecutor: newSpecExecutor}
}

// exitError is an error that carries hone's exit code for it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode tags err with an exit code; nil stays nil, and an error that
// carries a code already keeps it.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var coded *exitError
	if errors.As(err, &coded) {
		return err // it has its code already
	}
	return &exitError{code: code, err: err}
}

// exitWith returns an error that only sets the exit code; its message has
// already been printed.
func exitWith(code int) error { return &exitError{code: code, err: errSilent} }

var errSilent = errors.New("")

const exitCodesHelp = `Exit codes:
  0    success
  1    the experiment failed (fail_fast, stuck, a searcher error, the metric
       in no result), or an I/O error
  2    usage or spec error
  3    interrupted; resumable with "hone resume DIR"
  4    finished, but some trials ended in ERROR
  130  a second interrupt: exited at once (still resumable)`

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "hone",
		Short: "hone tunes hyperparameters",
		Long: `hone tunes hyperparameters. An experiment spec (YAML; see
examples/reference.yaml) names the command that trains one configuration,
the search space, the metric and the strategy; hone runs the trials as
processes, checkpoints and retries them, and keeps everything under
<storage>/<name>.

` + exitCodesHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		// --version prints the first line of hone version.
		Version: buildVersion(),
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return withCode(exitUsage, fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath()))
	})
	root.AddCommand(a.runCmd(), a.resumeCmd(), a.statusCmd(), a.resultsCmd(), a.validateCmd(), a.versionCmd(), a.agentCmd(), a.dashboardCmd(), a.plotCmd())
	return root
}

// execute runs the CLI with args, prints its error and returns the exit
// code (exitCode).
func (a *app) execute(ctx context.Context, args []string) int {
	err := a.command(ctx, args)
	code := exitCode(err)
	if err != nil && !errors.Is(err, errSilent) {
		msg := err.Error()
		var ee *exitError
		if !errors.As(err, &ee) { // an error cobra made itself
			msg += "\nRun 'hone --help' for usage."
		}
		fmt.Fprintf(a.stderr, "hone: %s\n", msg)
	}
	return code
}

// command runs the CLI with args and returns its error, with the types of
// the errors it wraps (an experiment's *hone.FailFastError, a spec's
// spec.Errors, ...) intact.
func (a *app) command(ctx context.Context, args []string) error {
	root := a.root()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// exitCode decides hone's exit code for err by its type, never its text:
// exitOK for nil, the code an *exitError in its chain carries (withCode,
// exitWith), else exitUsage (the errors cobra makes itself are about
// usage).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage
}

// killWait bounds how long a second interrupt waits for the trials'
// processes to be killed before hone exits.
const killWait = 3 * time.Second

// stopSignals are the signals that stop an experiment gracefully: Ctrl-C,
// a polite kill, and SIGHUP, which a closed terminal or SSH session sends.
// Those ignored when hone starts (nohup ignores SIGHUP) are left ignored.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interruptible returns a context that the first of stopSignals cancels
// (when the app handles signals). A second signal calls kill, which should
// end the trials at once (their processes are in process groups of their
// own, which the terminal's Ctrl-C does not reach), waits for it at most
// killWait, and exits with code 130. onFirst is printed on the first
// signal, onSecond on the second. stop releases the signal handling.
func (a *app) interruptible(ctx context.Context, onFirst, onSecond string, kill func()) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	if !a.handleSignals {
		return ctx, cancel
	}
	ch := make(chan os.Signal, 2)
	for _, sig := range stopSignals {
		// A signal ignored when hone started stays ignored: nohup hone
		// run ... must survive the hangup, and a background job of a
		// script its Ctrl-C.
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var sig os.Signal
		select {
		case sig = <-ch:
		case <-done:
			return
		}
		if sig == syscall.SIGHUP {
			// The terminal is gone, and with it often the reader of a
			// pipe hone writes to (hone run ... | tee log): a write
			// there must fail, not kill hone before it has saved.
			signal.Ignore(syscall.SIGPIPE)
		}
		fmt.Fprint(a.stderr, onFirst)
		cancel()
		select {
		case <-ch:
		case <-done:
			return
		}
		fmt.Fprint(a.stderr, onSecond)
		killed := make(chan struct{})
		go func() {
			kill()
			close(killed)
		}()
		select {
		case <-killed:
		case <-time.After(killWait):
		}
		os.Exit(exitKilled)
	})
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
		cancel()
	}
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print hone's version, the storage URLs it accepts, and the searchers, schedulers and executors it includes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, versionLine())
			fmt.Fprintf(w, "storage: %s\n", storageSchemesHelp)
			for _, kind := range []struct {
				title, kind string
				list        func() ([]string, map[string]string)
				objectives  map[string]string // how each takes several objectives
			}{{"searchers", "searcher", spec.Searchers, spec.MultiObjectiveSearchers()},
				{"schedulers", "scheduler", spec.Schedulers, spec.MultiObjectiveSchedulers()},
				{"executors", "executor", spec.Executors, nil}} {
				names, docs := kind.list()
				fmt.Fprintf(w, "%s:\n", kind.title)
				width := 0
				for _, n := range names {
					width = max(width, len(n))
				}
				for _, n := range names {
					fmt.Fprintf(w, "  %-*s  %s\n", width, n, docs[n])
					if ps := paramsText(kind.kind, n); ps != "" {
						fmt.Fprintf(w, "  %-*s  parameters: %s\n", width, "", ps)
					}
					if how := kind.objectives[n]; how != "" {
						fmt.Fprintf(w, "  %-*s  several objectives: %s\n", width, "", how)
					}
				}
			}
			return nil
		},
	}
}

// paramsText lists the parameters of plugin name of kind with their
// defaults, as hone version prints them: "key=default" ("key" alone for
// one without a default; a metric or mode left empty is the
// experiment's).
func paramsText(kind, name string) string {
	var out []string
	for _, p := range spec.Parameters(kind, name) {
		switch {
		case p.Default == nil:
			out = append(out, p.Name)
		case p.Default == "" && (p.Name == "metric" || p.Name == "mode"):
			out = append(out, p.Name+"=(the experiment's)")
		case p.Default == "":
			out = append(out, p.Name+`=""`)
		default:
			out = append(out, fmt.Sprintf("%s=%v", p.Name, p.Default))
		}
	}
	return strings.Join(out, ", ")
}

// versionLine is hone's version with the Go release and platform it was
// built for: "hone v1.2.3 (go1.26.8, linux/amd64)".
func versionLine() string {
	return fmt.Sprintf("hone %s (%s, %s/%s)", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildVersion is the version set at link time, else the module version
// from the build information, else hone.Version.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return hone.Version
}
