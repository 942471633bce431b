package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/hone-tune/hone"
	"github.com/hone-tune/hone/executor/slurm"
	"github.com/hone-tune/hone/internal/fsutil"
	"github.com/hone-tune/hone/runner"
	"github.com/hone-tune/hone/spec"
)

// Files run writes into the experiment directory next to the journal.
const (
	// specCopy is the spec the experiment was started with.
	specCopy = "spec.yaml"
	// originFile records where the spec came from, so that its relative
	// paths (working_dir) resolve the same way on resume.
	originFile = "spec_origin.json"
)

// origin is the content of originFile.
type origin struct {
	SpecFile string `json:"spec_file"` // absolute path of the spec run was given
	SpecDir  string `json:"spec_dir"`  // the directory its relative paths are relative to
	// Rules is the version of the plugins' decision rules the experiment
	// was started with (spec.RulesVersion); absent in experiments started
	// before it was recorded, which decide by version 1.
	Rules int `json:"rules,omitempty"`
}

// loadOrigin returns the origin of the experiment in dir, and whether it
// could be read.
func loadOrigin(dir string) (origin, bool) {
	var o origin
	data, err := os.ReadFile(filepath.Join(dir, originFile))
	return o, err == nil && json.Unmarshal(data, &o) == nil
}

// storedRules returns the version of the decision rules the experiment in
// dir was started with: its origin's, or 1 (the rules before the version
// was recorded) when the origin has none.
func storedRules(dir string) int {
	if o, ok := loadOrigin(dir); ok && o.Rules > 0 {
		return o.Rules
	}
	return 1
}

func (a *app) runCmd() *cobra.Command {
	var storage, name, executor string
	var resume, dash bool
	var df dashboardFlags
	cmd := &cobra.Command{
		Use:   "run SPEC.yaml",
		Short: "Run the experiment a spec describes",
		Long: `Run the experiment SPEC.yaml describes in <storage>/<name>, printing a
table of trials. The spec is copied there as spec.yaml, so "hone resume DIR"
needs nothing else. An existing experiment directory is an error unless
--resume is given, which resumes it with SPEC.yaml.

Ctrl-C stops the experiment gracefully (trials checkpoint and stop; exit
code 3) and prints how to resume it; a second Ctrl-C exits at once (130).
SIGTERM and SIGHUP (the terminal or SSH session closing) do the same.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.openDashboard(dash, df); err != nil {
				return err
			}
			defer a.closeDashboard()
			path := args[0]
			data, err := os.ReadFile(path)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("read spec: %w", err))
			}
			s, err := spec.Parse(data, path, filepath.Dir(path))
			if err != nil {
				return a.specError(err)
			}
			if cmd.Flags().Changed("storage") {
				s.Storage = storage
			}
			if cmd.Flags().Changed("executor") {
				s.SetExecutor(executor)
			}
			if cmd.Flags().Changed("name") {
				if err := checkNameFlag(name); err != nil {
					return withCode(exitUsage, err)
				}
				s.Name = name
			}
			if err := s.Validate(); err != nil {
				return a.specError(err)
			}
			if u, ok := s.StorageURL(); ok {
				return a.runRemote(cmd.Context(), s, u, path, data, resume)
			}
			dir, err := filepath.Abs(filepath.Join(s.Storage, s.Name))
			if err != nil {
				return withCode(exitFailed, err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return withCode(exitFailed, fmt.Errorf("create experiment directory: %w", err))
			}
			unlock, err := lockExperiment(dir)
			if err != nil {
				return err
			}
			defer unlock()
			t := &target{dir: dir, shown: dir}
			if runner.Exists(dir) {
				if !resume {
					return withCode(exitUsage, fmt.Errorf("%s already holds an experiment; resume it with --resume (or hone resume %s), or choose another --name", dir, dir))
				}
				return a.resumeWithSpec(cmd.Context(), t, s, path, data)
			}
			if err := saveSpec(dir, path, data, spec.RulesVersion); err != nil {
				return withCode(exitFailed, err)
			}
			fmt.Fprintf(a.stderr, "hone: running experiment %q in %s\n", s.Name, dir)
			return a.runExperiment(cmd.Context(), s, t, nil)
		},
	}
	cmd.Flags().StringVar(&executor, "executor", "", executorFlagHelp)
	cmd.Flags().StringVar(&storage, "storage", "", "where experiments live: a directory, file:///abs/path, or s3://bucket/prefix?endpoint=...&region=... (default: the spec's storage, or hone_results)")
	cmd.Flags().StringVar(&name, "name", "", "experiment name, the directory under storage (default: the spec's name, or the spec file's base name)")
	cmd.Flags().BoolVar(&resume, "resume", false, "resume the experiment if its directory exists")
	cmd.Flags().BoolVar(&dash, "dashboard", false, "serve the experiment's web dashboard while it runs (see hone dashboard)")
	df.register(cmd.Flags(), "dashboard-")
	return cmd
}

// executorFlagHelp describes --executor.
const executorFlagHelp = "where trials run, for this session: local or slurm (default: the spec's executor); a name other than the spec's drops the spec's executor parameters"

// checkNameFlag checks the --name of hone run, which names a directory: it
// needs a visible character, and no control character or invalid UTF-8
// (the spec's checks, such as no slash, come after).
func checkNameFlag(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("--name %q: not valid UTF-8", name)
	}
	visible := false
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("--name %q: must not contain control characters such as %q", name, r)
		}
		if unicode.IsGraphic(r) && !unicode.IsSpace(r) {
			visible = true
		}
	}
	if !visible {
		return fmt.Errorf("--name %q: names the experiment's directory, so it needs a visible character", name)
	}
	return nil
}

func (a *app) resumeCmd() *cobra.Command {
	var specPath, executor string
	var flags struct{ errored, restart, noUnfinished, truncate, dash bool }
	var df dashboardFlags
	cmd := &cobra.Command{
		Use:   "resume DIR",
		Short: "Resume a stopped, interrupted or crashed experiment",
		Long: `Resume the experiment in DIR with its spec (DIR/spec.yaml), or with --spec.
Trials that were running restart from their latest checkpoint; finished
trials are not redone.

--spec may change only settings that do not change hone's decisions: the
command, env, working_dir, resources, gpus, custom_resources,
max_concurrent_trials, max_pending_trials, checkpoint.num_to_keep, failure,
trial_timeout, report_timeout and stop_grace; they apply from the resume on. A
change to anything else (metric, mode, seed, num_samples, the search
space, the searcher, the scheduler and their parameters, stop, checkpoint
scoring and timing, trainable) is refused, every one named at once, with
exit code 2. The spec a resume used becomes the experiment's spec,
DIR/spec.yaml, for every later resume; the ones before it are kept as
DIR/spec.1.yaml, DIR/spec.2.yaml, ...

A journal whose last line was torn by a crash is cut back to its last
complete line. A corrupt line in the middle is an error naming the line;
--truncate-journal continues from the lines before it on purpose, keeping
the lines cut in experiment_state.jsonl.corrupt-N beside the journal.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.openDashboard(flags.dash, df); err != nil {
				return err
			}
			defer a.closeDashboard()
			ctx := cmd.Context()
			var t *target
			var parent, name string
			if isRemote(args[0]) {
				var err error
				if t, err = openRemote(ctx, args[0]); err != nil {
					return err
				}
				defer t.close()
				has, err := t.exp.Store.HasJournal(ctx)
				if err != nil {
					return withCode(exitFailed, fmt.Errorf("storage %s: %w", t.shown, err))
				}
				if !has {
					return withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal); start one with hone run SPEC.yaml", t.shown))
				}
				parent, name = splitURL(args[0])
			} else {
				dir, err := filepath.Abs(args[0])
				if err != nil {
					return withCode(exitFailed, err)
				}
				if !runner.Exists(dir) {
					return withCode(exitUsage, fmt.Errorf("%s holds no experiment (no journal); start one with hone run SPEC.yaml", dir))
				}
				t = &target{dir: dir, shown: dir}
				parent, name = filepath.Dir(dir), filepath.Base(dir)
			}
			unlock, err := lockExperiment(t.dir)
			if err != nil {
				return err
			}
			defer unlock()
			if t.exp != nil {
				note, err := t.restore(ctx, flags.truncate)
				if err != nil {
					return withCode(exitFailed, err)
				}
				if note != "" {
					fmt.Fprintf(a.stderr, "hone: %s\n", note)
				}
			}
			var s *spec.Spec
			var data []byte
			if specPath == "" {
				s, err = loadStoredSpec(t.dir, "")
			} else if data, err = os.ReadFile(specPath); err != nil {
				err = fmt.Errorf("read spec: %w", err)
			} else {
				s, err = spec.Parse(data, specPath, filepath.Dir(specPath))
			}
			if err != nil {
				return a.specError(err)
			}
			s.Storage, s.Name = parent, name
			if cmd.Flags().Changed("executor") {
				s.SetExecutor(executor)
			}
			if err := s.Validate(); err != nil {
				return a.specError(err)
			}
			finish := func(err error) error { return err }
			if specPath != "" {
				if err := a.checkResumeSpec(t, specPath, s); err != nil {
					return err
				}
				if finish, err = a.adoptSpec(t.dir, specPath, data); err != nil {
					return withCode(exitFailed, err)
				}
				t.settle = finish
			}
			fmt.Fprintf(a.stderr, "hone: resuming the experiment in %s\n", t.shown)
			return finish(a.runExperiment(ctx, s, t, &hone.ResumeFlags{
				Unfinished:     !flags.noUnfinished,
				Errored:        flags.errored,
				RestartErrored: flags.restart,
			}, func(o *runner.Options) { o.TruncateJournal = flags.truncate }))
		},
	}
	cmd.Flags().StringVar(&specPath, "spec", "", "resume with this spec instead of DIR/spec.yaml")
	cmd.Flags().StringVar(&executor, "executor", "", executorFlagHelp)
	cmd.Flags().BoolVar(&flags.errored, "resume-errored", false, "retry trials that ended in ERROR, from their latest checkpoint")
	cmd.Flags().BoolVar(&flags.restart, "restart-errored", false, "restart trials that ended in ERROR from scratch, under new ids")
	cmd.Flags().BoolVar(&flags.noUnfinished, "no-unfinished", false, "terminate unfinished (pending, running, paused) trials instead of resuming them")
	cmd.Flags().BoolVar(&flags.truncate, "truncate-journal", false, "continue from the valid lines before a corrupt journal line, keeping the rest in a file beside the journal")
	cmd.Flags().BoolVar(&flags.dash, "dashboard", false, "serve the experiment's web dashboard while it runs (see hone dashboard)")
	df.register(cmd.Flags(), "dashboard-")
	cmd.MarkFlagsMutuallyExclusive("resume-errored", "restart-errored")
	return cmd
}

func (a *app) validateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC.yaml",
		Short: "Check a spec and print every problem in it",
		Long: `Check SPEC.yaml without running anything and print every problem at once,
one per line as FILE:LINE: KEY: PROBLEM. The exit code is 2 if there is any.
For searcher: auto and scheduler: auto it prints what each resolves to, and why.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := spec.Load(args[0])
			if err != nil {
				return a.specError(err)
			}
			where := "experiment directory " + filepath.Join(s.Storage, s.Name)
			if u, ok := s.StorageURL(); ok {
				where = "experiment at " + spec.Redact(u) // not opened: validate works offline
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (searcher %s, scheduler %s, %s)\n",
				args[0], s.Searcher.Name, s.Scheduler.Name, where)
			for _, line := range s.AutoChoices() {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", line)
			}
			return nil
		},
	}
}

// specError prints a spec's problems, one per line, and returns the usage
// exit code.
func (a *app) specError(err error) error {
	var list spec.Errors
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(a.stderr, e)
		}
		n := len(list)
		if n == 1 {
			fmt.Fprintln(a.stderr, "hone: 1 problem in the spec")
		} else {
			fmt.Fprintf(a.stderr, "hone: %d problems in the spec\n", n)
		}
		return exitWith(exitUsage)
	}
	return withCode(exitUsage, err)
}

// saveSpec writes the spec and its origin into the experiment directory,
// with the version of the decision rules the experiment decides by
// (spec.RulesVersion for a new one; the experiment's own when a resume
// adopts another spec).
func saveSpec(dir, path string, data []byte, rules int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create experiment directory: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("save spec: %w", err)
	}
	o, err := json.MarshalIndent(origin{SpecFile: abs, SpecDir: filepath.Dir(abs), Rules: rules}, "", "  ")
	if err != nil {
		return fmt.Errorf("save spec: %w", err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, specCopy), data, 0o644); err != nil {
		return fmt.Errorf("save spec: %w", err)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, originFile), append(o, '\n'), 0o644); err != nil {
		return fmt.Errorf("save spec: %w", err)
	}
	return nil
}

// loadStoredSpec reads the spec of the experiment in dir: specPath if
// given, else the copy run saved, whose relative paths resolve against the
// original spec's directory.
func loadStoredSpec(dir, specPath string) (*spec.Spec, error) {
	if specPath != "" {
		return spec.Load(specPath)
	}
	base := dir
	if or, ok := loadOrigin(dir); ok && or.SpecDir != "" {
		base = or.SpecDir
		if _, err := os.Stat(base); err != nil {
			// Resumed on another machine: relative paths resolve
			// against the current directory, as on a fresh run.
			if wd, err := os.Getwd(); err == nil {
				base = wd
			}
		}
	}
	return loadStoredSpecFrom(dir, base)
}

// loadStoredSpecFrom reads the spec saved in the experiment directory dir,
// resolving its relative paths against base.
func loadStoredSpecFrom(dir, base string) (*spec.Spec, error) {
	p := filepath.Join(dir, specCopy)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read the experiment's spec (pass --spec SPEC.yaml if it is elsewhere): %w", err)
	}
	return spec.Parse(data, p, base)
}

// runExperiment runs (flags == nil) or resumes the experiment of s in dir and
// maps the outcome to an exit code. opts adjust the runner's options.
func (a *app) runExperiment(ctx context.Context, s *spec.Spec, t *target, flags *hone.ResumeFlags, opts ...func(*runner.Options)) error {
	dir := shellArg(t.shown) // in messages, and in commands to copy
	if a.dashLn != nil {
		stopDash, err := a.startDashboard(ctx, a.dashLn, t.dir, t.shown)
		if err != nil {
			return err
		}
		defer stopDash()
	}
	if flags != nil {
		// A resume decides by the rules the experiment started with,
		// whichever spec it was given.
		s.Rules = storedRules(t.dir)
	}
	plan, err := spec.Build(s, t.dir, a.stdout)
	if err != nil {
		return a.specError(err)
	}
	if t.exp != nil {
		plan.Process.Store = t.exp.URL
	}
	exec, err := a.newExecutor(plan.Process)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("start the executor: %w", err))
	}
	plan.Options.Executor = exec
	plan.Options.Log = a.stderr
	for _, o := range opts {
		o(&plan.Options)
	}
	if t.exp != nil {
		if err := t.exp.Start(ctx, &plan.Options, func(format string, args ...any) {
			fmt.Fprintf(a.stderr, "hone: "+format+"\n", args...)
		}); err != nil {
			_ = exec.Close()
			_ = plan.Close()
			return withCode(exitFailed, err)
		}
	}

	ctx, stop := a.interruptible(ctx,
		"\nhone: stopping: running trials are asked to save and stop; press Ctrl-C again to kill them and quit at once\n",
		fmt.Sprintf("\nhone: killing the trials and quitting; resume with: hone resume %s\n", dir),
		func() { _ = exec.Close() }) // the process is about to exit; nothing to report to
	var out *runner.Outcome
	if flags == nil {
		out, err = runner.Run(ctx, plan.Experiment, plan.Options)
	} else {
		out, err = runner.Resume(ctx, plan.Experiment, plan.Options, *flags)
	}
	stop()
	if cerr := plan.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if t.exp != nil {
		if t.settle != nil {
			err = t.settle(err)
		}
		if cerr := t.exp.Finish(context.Background()); cerr != nil {
			fmt.Fprintf(a.stderr, "hone: the experiment's last changes did not reach %s: %v\n(its local copy is in %s; hone resume %s continues from what the store holds)\n", t.shown, cerr, t.dir, t.shown)
			if err == nil {
				return exitWith(exitFailed)
			}
		}
	}
	switch {
	case err != nil:
		var nodes *slurm.NodeStorageError
		if out == nil && errors.As(err, &nodes) {
			// The cluster's setting, found before any trial started, as
			// a partition that does not exist is.
			return withCode(exitUsage, err)
		}
		if out == nil { // it never started
			return withCode(exitFailed, err)
		}
		if advice := fieldAdvice(err, t); advice != nil {
			return withCode(exitFailed, fmt.Errorf("experiment failed: %w\n%w", err, advice))
		}
		return withCode(exitFailed, fmt.Errorf("experiment failed: %w\n(its state is in %s; fix the cause and run hone resume %s)", err, dir, dir))
	case out.Interrupted:
		fmt.Fprintf(a.stderr, "hone: interrupted; resume with:\n  hone resume %s\n", dir)
		return exitWith(exitInterrupted)
	}
	var failed []*hone.Trial
	for _, t := range out.Trials {
		if t.Status == hone.StatusError {
			failed = append(failed, t)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(a.stderr, "hone: %d of %d trials ended in ERROR (see error.txt in their directories under %s); retry them with:\n  hone resume %s --resume-errored\n",
			len(failed), len(out.Trials), dir, dir)
		return exitWith(exitTrialErrors)
	}
	if unfinished := countUnfinished(out.Trials); out.Stopped != "" && unfinished > 0 {
		fmt.Fprintf(a.stderr, "hone: stopped (%s) with %s unfinished; see hone results %s, or continue with:\n  hone resume %s\n",
			out.Stopped, plural(unfinished, "trial"), dir, dir)
		return nil
	}
	if objs := s.ResolvedObjectives(); len(objs) > 1 || len(s.Constraints) > 0 {
		// The progress table's best trial is by the primary objective
		// only.
		fmt.Fprintf(a.stderr, "hone: done; the trials no other beats on every objective (%s): hone results %s --pareto\n", objectiveList(objs), dir)
		return nil
	}
	fmt.Fprintf(a.stderr, "hone: done; see hone results %s\n", dir)
	return nil
}

// countUnfinished counts the trials that are not TERMINATED or ERROR.
func countUnfinished(ts []*hone.Trial) int {
	n := 0
	for _, t := range ts {
		if !t.Status.Finished() {
			n++
		}
	}
	return n
}
