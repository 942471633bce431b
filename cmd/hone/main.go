// Command hone tunes hyperparameters from an experiment spec (a YAML file;
// see examples/reference.yaml) whose trials run as processes.
//
//	hone run SPEC.yaml [--storage DIR] [--name NAME] [--executor local|slurm] [--resume] [--dashboard]
//	hone resume DIR [--spec SPEC] [--resume-errored] [--restart-errored] [--no-unfinished] [--dashboard]
//	hone status DIR
//	hone results DIR [--best] [--metric M] [--mode min|max] [--scope S] [--csv]
//	hone dashboard DIR|URL [--addr 127.0.0.1:8265] [--allow-remote] [--metric M] [--mode min|max]
//	hone plot DIR|URL [--out DIR] [--metric M] [--mode min|max] [--max-trials N]
//	hone validate SPEC.yaml
//	hone version (or hone --version)
//
// dashboard serves a read-only web dashboard of an experiment, running or
// finished, on a loopback address unless --allow-remote is given (package
// dashboard, docs/DASHBOARD.md); run --dashboard and resume --dashboard
// serve it alongside the run, on --dashboard-addr.
//
// plot writes an experiment's charts as PNG and SVG files, without a
// browser: learning curves, the best so far against time and budget, PBT's
// lineage and schedules, the rungs of ASHA and HyperBand, and parallel
// coordinates (package plots, docs/PLOTS.md); into DIR/plots unless --out
// says elsewhere.
//
// run copies the spec into the experiment directory as spec.yaml, so
// resume needs only the directory. The first Ctrl-C (SIGINT), SIGTERM or
// SIGHUP (a closed terminal or SSH session) stops an experiment
// gracefully: running trials are asked to checkpoint and stop, the journal
// records everything, and hone exits with code 3; hone resume continues
// it. A second such signal exits at once with code 130, which the journal
// also makes safe to resume.
//
// Exit codes:
//
//	0    success
//	1    the experiment failed (fail_fast, stuck, a searcher error, the metric
//	     in no result), or an I/O error
//	2    usage or spec error
//	3    interrupted; resumable with hone resume
//	4    finished, but some trials ended in ERROR
//	130  a second interrupt: exited at once
//
// This is the only place that wires concrete implementations by name: the
// searcher and scheduler tables live in package spec, the executor is the
// process executor.
package main

import (
	"context"
	"os"
)

// The exit codes of hone, as documented in the package comment and in
// hone --help.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 3
	exitTrialErrors = 4
	exitKilled      = 130
)

func main() {
	a := newApp(os.Stdout, os.Stderr)
	a.handleSignals = true
	os.Exit(a.execute(context.Background(), os.Args[1:]))
}
