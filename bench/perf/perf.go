// Package perf is the control-plane performance suite of docs/BENCHMARKS.md §1:
// Ray Tune's release-test shapes scaled to a 2-core machine,
// each measured through hone's public API beside a physical baseline
// measured in the same run, with the ratio hone ÷ baseline, the target of
// docs/BENCHMARKS.md and Ray's published bar where there is one.
//
// The shapes (names as -only takes them):
//
//   - bookkeeping: 100,000 trials × 1 result through runner.Run on the sim
//     executor (trials/s). Baseline: per trial, one map insert of a fresh
//     record keyed by a fresh id, one buffered channel send and receive of
//     its one result, one map lookup to update the record — the least any
//     in-process controller can do per trial.
//   - results: 10,000 trials × 100 results through runner.Run with FIFO,
//     ASHA and PBT deciding (PBT's population: Config.PBTTrials), on the
//     inproc executor (function trainables
//     reporting as fast as they can) and on the sim executor (results/s).
//     Baseline: one send of an empty struct on a buffered channel to
//     another goroutine per result. With FIFO a note gives the executor
//     driven alone by the simplest loop, to split hone's cost between the
//     executor and the runner, controller and journal.
//   - scaling: throughput against the number of trials, with FIFO: the
//     bookkeeping measurement (trials/s, one result each, sim executor)
//     and the results measurement (results/s, 10 results each, sim and,
//     up to 10,000 trials, inproc executors) for 1,000 … 100,000 trials,
//     each point beside its own baseline (the floor loop, the channel).
//   - checkpoint: writing a checkpoint file into a staging directory and
//     committing it with store/local (durable), for 1 MB … 1 GB, against
//     writing the same bytes to a file and fsyncing it (MB/s); and cloning
//     the committed checkpoint with Store.Link (an exploit) against a
//     durable copy of the same bytes.
//   - journal: the per-event cost of journaling a real experiment's
//     inputs: they are replayed through a fresh controller and journaled
//     through internal/journal (importable here: the bench module's path
//     is inside hone's) as runner.step and runner.apply do (an explicit
//     flush only before effects outside the process, the writer's group
//     commit otherwise, an fsync at most once a second), minus the same
//     replay without a journal; against writing the same bytes with the
//     same explicit flushes and fsyncs. And runner.Resume of the finished
//     100,000-trial experiment against reading its journal's bytes.
//   - memory: heap per live and per finished trial of a controller holding
//     100,000 trials (runtime.ReadMemStats after GC), against a map of
//     minimal records holding the same id, configuration and last metrics.
//     The controller is driven directly with the inputs the runner would
//     give it, so no executor, journal or store is counted.
//   - pausing: a scheduler that pauses after every report, an 80 MB
//     checkpoint per report, durable store (pause/resume cycles/s), against
//     writing and fsyncing the same bytes, as many writers at once as
//     trials run at once.
//   - overhead: 2,000 one-second trials on the process executor (the
//     second bookkeeping shape): each trial a real subprocess, the Go
//     trial program of bench/process (proctrial sleep 1s, built once with
//     go build) sleeping 1 s and reporting one result through hone's wire
//     protocol, 16 at a time through runner.Run with FIFO. The figure is
//     the overhead (wall − ideal) ÷ ideal in percent, ideal being
//     ceil(trials ÷ concurrency) × 1 s (125 s). Baseline: the same trial
//     program run by hand (no hone) with os/exec, as many at a time, and
//     its own overhead over the same ideal. Each run takes about its ideal
//     time, so the shape runs once by default (Config.OverheadReps, not
//     Reps): about 4 to 5 minutes in all.
//   - process: the subprocess shapes of bench/process, run only when named
//     with -only (they have their own command, procbench).
//   - storage: hone's object store (store/blob) on a real S3 server
//     (Config.StorageURL, by default $HONE_TEST_S3_URL), run only when
//     named with -only. Variants: commit (Store.Commit of a 1 MB and a
//     100 MB checkpoint in 1 and in 4 files, MB/s, against uploading the
//     same files by hand with the same SDK, a gocloud.dev blob writer per
//     file and a small manifest object last); latency (8 inproc trials
//     reporting every 10 ms through runner.Run with the store on the
//     server, one of which commits a 1 GiB checkpoint: the p99 latency
//     from a report to its journal line for the other trials, against
//     the same experiment with no upload over a window as long, and in a
//     note the experiment beside an upload of the same bytes by hand:
//     what the machine alone does to the latency); link
//     (Store.Link, a server-side copy, of a 1 MB … 1 GB checkpoint,
//     against downloading and uploading the same objects through the
//     client). The local store's commit against a raw write + fsync is
//     the checkpoint shape.
//   - cluster: what running trials on a Slurm cluster costs
//     (executor/slurm), run only when named with -only: step-mode
//     launches inside an allocation against srun by hand (launch),
//     results over the executor's TCP server against Unix sockets (tcp),
//     the driver's CPU per simulated cluster trial reporting once a
//     second (cpu), and job mode's squeue poll against one squeue per job
//     (poll); launch and poll need a Slurm cluster (scripts/with-slurm.sh
//     starts the test one). See ClusterConfig.
//
// With -cpuprofile, each measurement's first hone run (not its baseline,
// except in the checkpoint shape, where commits and raw writes alternate
// and the raw ones are under rawWrite) runs under a CPU profile written to <prefix>-<measurement>.pprof, e.g.
// /tmp/cpu-bookkeeping.pprof or /tmp/cpu-results-inproc-fifo.pprof;
// -memprofile writes heap profiles the same way (the memory shape writes
// memory-live and memory-finished at the moments it measures). The
// scaling shape's runs are not profiled.
//
// With a plot directory (Config.PlotDir, -plots), the run draws
// perf-throughput.png from the scaling shape (hone and baseline against
// the number of trials) and perf-checkpoint.png from the checkpoint shape
// (commit and raw write MB/s against size; Store.Link and durable copy
// time against size), each point the median of its samples with a bar
// from the smallest to the largest.
//
// Use cmd/perfbench to run it. Every measurement checks what it measured:
// the results hone saw equal the results the trainables reported, every
// trial ends TERMINATED, a resume brings back every trial.
package perf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hone-tune/hone/bench/internal/benchutil"
	"github.com/hone-tune/hone/bench/process"
)

// Config says what to measure and how much.
type Config struct {
	// Smoke marks a configuration with tiny sizes (checks that everything
	// runs; the figures mean little).
	Smoke bool
	// Trials is the number of trials of the bookkeeping, journal and
	// memory shapes.
	Trials int
	// Concurrency is how many trials run at once in the bookkeeping and
	// results shapes (Ray's bookkeeping test runs 16).
	Concurrency int
	// ResultTrials and ResultsPerTrial size the results shape.
	ResultTrials, ResultsPerTrial int
	// PBTTrials replaces ResultTrials for the PBT variants (PBT's
	// population is every trial), so that the smoke run can keep it small.
	PBTTrials int
	// ScalingTrials are the numbers of trials of the scaling shape;
	// ScalingInprocMax is the largest of them run on the inproc executor,
	// and ScalingResultsPerTrial the results per trial of its results
	// variants.
	ScalingTrials                            []int
	ScalingInprocMax, ScalingResultsPerTrial int
	// CheckpointSizes are the checkpoint sizes in bytes.
	CheckpointSizes []int64
	// PauseBytes is the checkpoint size of the pausing shape; PauseTrials
	// trials (two at a time) each report PauseReports times.
	PauseBytes                int64
	PauseTrials, PauseReports int
	// OverheadTrials trials of OverheadSleep each run OverheadConcurrency
	// at a time in the overhead shape, OverheadReps times (hone and its
	// baseline alternately; figures are medians).
	OverheadTrials, OverheadConcurrency, OverheadReps int
	OverheadSleep                                     time.Duration
	// StorageURL is the S3 server of the storage shape (an s3:// URL; the
	// shape works under a fresh key prefix of it and removes it at the
	// end). Empty: the shape fails, saying how to start one.
	StorageURL string
	// StorageCommitSizes are the checkpoint sizes of the storage shape's
	// commit variant, each committed as every number of files of
	// StorageCommitFiles; StorageLinkSizes those of its link variant.
	StorageCommitSizes, StorageLinkSizes []int64
	StorageCommitFiles                   []int
	// StorageUploadBytes is the checkpoint one of StorageTrials trials,
	// each reporting every StorageReportEvery, commits in the storage
	// shape's latency variant.
	StorageUploadBytes int64
	StorageTrials      int
	StorageReportEvery time.Duration
	// StorageResumeTrials is the size of the finished sim experiment the
	// storage shape's resume variant resumes from S3 and from local disk.
	StorageResumeTrials int
	// Cluster sizes the cluster shape.
	Cluster ClusterConfig
	// Reps is how many times each measurement is repeated, hone and its
	// baseline alternately; figures are medians. The memory shape is
	// measured once, the overhead shape OverheadReps times.
	Reps int
	// Dir is where the experiments and files are written ("" = the
	// system temporary directory). A fresh subdirectory is made and
	// removed at the end.
	Dir string
	// Only selects shapes (see ShapeNames), or "shape/variant" for one
	// variant (e.g. results/inproc-fifo). Empty selects every shape but
	// process.
	Only []string
	// CPUProfile and MemProfile, when set, are path prefixes: each
	// measurement writes <prefix>-<measurement>.pprof.
	CPUProfile, MemProfile string
	// PlotDir, when set, is the directory the plots are written to
	// (created if need be).
	PlotDir string
	// Command, when set, is printed at the top of the output: the command
	// line that ran the suite.
	Command string
	// Log receives progress notes (nil: none).
	Log io.Writer
}

// DefaultConfig is a full run.
func DefaultConfig() Config {
	return Config{
		Trials:                 100_000,
		Concurrency:            16,
		ResultTrials:           10_000,
		ResultsPerTrial:        100,
		PBTTrials:              10_000,
		ScalingTrials:          []int{1000, 3000, 10_000, 30_000, 100_000},
		ScalingInprocMax:       10_000,
		ScalingResultsPerTrial: 10,
		CheckpointSizes:        []int64{1 << 20, 10 << 20, 100 << 20, 1 << 30},
		PauseBytes:             80 << 20,
		PauseTrials:            4,
		PauseReports:           10,
		// Each run of the overhead shape takes its ideal time, 125 s, and
		// its baseline as long: one repetition keeps it near 4 minutes.
		OverheadTrials:      2000,
		OverheadConcurrency: 16,
		OverheadReps:        1,
		OverheadSleep:       time.Second,
		StorageCommitSizes:  []int64{1 << 20, 100 << 20},
		StorageCommitFiles:  []int{1, 4},
		StorageLinkSizes:    []int64{1 << 20, 10 << 20, 100 << 20, 1 << 30},
		StorageUploadBytes:  1 << 30,
		StorageTrials:       8,
		StorageReportEvery:  10 * time.Millisecond,
		StorageResumeTrials: 10000,
		Cluster:             DefaultClusterConfig(),
		Reps:                3,
	}
}

// SmokeConfig is a run with tiny sizes, to check that every shape works.
func SmokeConfig() Config {
	return Config{
		Smoke:                  true,
		Trials:                 1000,
		Concurrency:            16,
		ResultTrials:           40,
		ResultsPerTrial:        12,
		PBTTrials:              40,
		ScalingTrials:          []int{50, 200},
		ScalingInprocMax:       200,
		ScalingResultsPerTrial: 5,
		CheckpointSizes:        []int64{64 << 10, 1 << 20},
		PauseBytes:             8 << 20,
		PauseTrials:            2,
		PauseReports:           3,
		// 8 trials 4 at a time: two waves, so that trials queue.
		OverheadTrials:      8,
		OverheadConcurrency: 4,
		OverheadReps:        1,
		OverheadSleep:       time.Second,
		StorageCommitSizes:  []int64{64 << 10, 1 << 20},
		StorageCommitFiles:  []int{1, 4},
		StorageLinkSizes:    []int64{64 << 10, 1 << 20},
		StorageUploadBytes:  4 << 20,
		StorageTrials:       4,
		StorageReportEvery:  10 * time.Millisecond,
		StorageResumeTrials: 100,
		Cluster:             SmokeClusterConfig(),
		Reps:                1,
	}
}

// Shape names, as -only takes them.
const (
	ShapeBookkeeping = "bookkeeping"
	ShapeResults     = "results"
	ShapeScaling     = "scaling"
	ShapeCheckpoint  = "checkpoint"
	ShapeJournal     = "journal"
	ShapeMemory      = "memory"
	ShapePausing     = "pausing"
	ShapeOverhead    = "overhead"
	ShapeProcess     = "process"
	ShapeStorage     = "storage"
	ShapeCluster     = "cluster"
)

// ShapeNames returns the shape names in the order they run.
func ShapeNames() []string {
	return []string{ShapeBookkeeping, ShapeResults, ShapeScaling, ShapeCheckpoint, ShapeJournal, ShapeMemory, ShapePausing, ShapeOverhead, ShapeProcess, ShapeStorage, ShapeCluster}
}

// Target is the target set for a figure (docs/BENCHMARKS.md §1).
type Target struct {
	// Text states it, e.g. "≥ 20,000 trials/s"; "" means no target.
	Text string
	// Met tells whether a row meets it.
	Met func(r Row) bool
}

// Row is one measured figure beside its baseline.
type Row struct {
	Shape string // e.g. "bookkeeping"
	Name  string // what was measured, e.g. "sim, 100000 trials × 1 result, 16 at a time"
	Unit  string // unit of Value and Base, e.g. "trials/s"
	// Value is hone's figure, the median of Samples.
	Value   float64
	Samples []float64
	// BaseName describes the baseline; Base is its median.
	BaseName    string
	Base        float64
	BaseSamples []float64
	// Higher tells whether a higher Value is better (rates) or worse
	// (costs: ns/event, seconds, bytes).
	Higher bool
	Target Target
	// Ray is Ray Tune's published bar or figure for the same shape, or "".
	Ray string
	// Observed and Expected are the counts the measurement checked equal:
	// results hone saw against results the trainables reported, trials
	// resumed against trials run (both 0 when nothing was counted).
	Observed, Expected int64
	// Notes break the figure down or say what else was seen.
	Notes []string
}

// Ratio is Value ÷ Base.
func (r Row) Ratio() float64 { return r.Value / r.Base }

// Verdict is "yes" or "no" against the target, "—" without one.
func (r Row) Verdict() string {
	if r.Target.Met == nil {
		return "—"
	}
	if r.Target.Met(r) {
		return "yes"
	}
	return "no"
}

// atLeast is a target on the figure: Value ≥ v.
func atLeast(text string, v float64) Target {
	return Target{Text: text, Met: func(r Row) bool { return r.Value >= v }}
}

// atMost is a target on the figure: Value ≤ v.
func atMost(text string, v float64) Target {
	return Target{Text: text, Met: func(r Row) bool { return r.Value <= v }}
}

// Main is the perfbench command: it parses args, runs the selected
// shapes, prints each figure as it is measured and a table at the end to
// stdout, progress to stderr. It returns the process's exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("perfbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	smoke := fs.Bool("smoke", false, "tiny sizes: check that every shape runs (figures mean little)")
	only := fs.String("only", "", "comma-separated shapes to run ("+strings.Join(ShapeNames(), ", ")+
		"), or shape/variant: results/{inproc,sim}-{fifo,asha,pbt}, scaling/{sim-trials,sim-results,inproc-results}, "+
		"checkpoint/<size, e.g. 10MB>, journal/{append,resume}, "+
		"memory/{live,finished}, storage/{commit,latency,link,resume}, cluster/{launch,tcp,cpu,poll}; default: all but process, storage and cluster")
	dir := fs.String("dir", "", "scratch directory for experiments and files (default: the system temporary directory)")
	cpu := fs.String("cpuprofile", "", "write a CPU profile of each measurement's hone run to `prefix`-<measurement>.pprof")
	mem := fs.String("memprofile", "", "write a heap profile after each measurement's hone run to `prefix`-<measurement>.pprof")
	reps := fs.Int("reps", 0, "repetitions of each measurement; figures are medians (default 3, smoke 1)")
	trials := fs.Int("trials", 0, "trials of the bookkeeping, journal and memory shapes (default 100000)")
	conc := fs.Int("concurrency", 0, "trials at once in the bookkeeping and results shapes (default 16)")
	rTrials := fs.Int("result-trials", 0, "trials of the results shape with FIFO and ASHA (default 10000)")
	pbtTrials := fs.Int("pbt-trials", 0, "trials (the population) of the results shape with PBT (default 10000)")
	rPer := fs.Int("results-per-trial", 0, "results per trial of the results shape (default 100)")
	scalingTrials := fs.String("scaling-trials", "", "comma-separated numbers of trials of the scaling shape (default 1000,3000,10000,30000,100000)")
	inprocMax := fs.Int("scaling-inproc-max", 0, "most trials of the scaling shape run on the inproc executor (default 10000)")
	sizes := fs.String("checkpoint-sizes", "", "comma-separated checkpoint sizes in MB (default 1,10,100,1024)")
	plots := fs.String("plots", "results", "directory to write perf-throughput.png and perf-checkpoint.png to (\"\": no plots)")
	pauseMB := fs.Int("pause-mb", 0, "checkpoint size of the pausing shape in MB (default 80, smoke 8)")
	pauseReports := fs.Int("pause-reports", 0, "reports (pause/resume cycles) per trial in the pausing shape (default 10)")
	ovTrials := fs.Int("overhead-trials", 0, "one-second process trials of the overhead shape (default 2000, smoke 8)")
	ovConc := fs.Int("overhead-concurrency", 0, "trials at once in the overhead shape (default 16, smoke 4)")
	ovReps := fs.Int("overhead-reps", 0, "repetitions of the overhead shape, about 2 × ideal time each (default 1)")
	storageURL := fs.String("storage-url", os.Getenv(StorageURLEnv), "S3 server of the storage shape (`s3://BUCKET?endpoint=...`; default $"+StorageURLEnv+")")
	uploadMB := fs.Int("storage-upload-mb", 0, "checkpoint size in MB the storage shape's latency variant uploads (default 1024, smoke 4)")
	clusterPartition := fs.String("cluster-partition", "", "partition of the cluster shape's allocation and jobs (default: the cluster's default)")
	clusterWindow := fs.Duration("cluster-window", 0, "how long the cluster shape's cpu variant measures each experiment (default 20s, smoke 1s)")
	clusterCPUTrials := fs.String("cluster-cpu-trials", "", "comma-separated numbers of simulated trials of the cluster shape's cpu variant (default 100,250,500)")
	clusterFilesMaxOpen := fs.Int("cluster-files-max-open", 0, "diagnosis: trials whose per-trial files stay open at once in the cluster shape's cpu variant (callback.WithMaxOpen; default 256, as hone run)")
	clusterLaunchTrials := fs.Int("cluster-launch-trials", 0, "launches of each kind per repetition of the cluster shape's launch variant (default 30, smoke 4)")
	clusterSqueueNoop := fs.Bool("cluster-squeue-noop", false, "diagnosis: in the cluster shape's launch variant, hone's squeue calls run a no-op")
	clusterLaunchReps := fs.Int("cluster-launch-reps", 0, "repetitions of the cluster shape's launch variant (default 7, smoke 1)")
	quiet := fs.Bool("q", false, "no progress notes on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: perfbench [flags]\n\nMeasures hone's control plane against physical baselines (docs/BENCHMARKS.md §1).")
		fs.PrintDefaults()
	}
	if status, ok := benchutil.ParseFlags(fs, args, stderr); !ok {
		return status
	}
	cfg := DefaultConfig()
	if *smoke {
		cfg = SmokeConfig()
	}
	for _, o := range []struct {
		flag int
		dst  *int
	}{{*reps, &cfg.Reps}, {*trials, &cfg.Trials}, {*conc, &cfg.Concurrency}, {*rTrials, &cfg.ResultTrials},
		{*rPer, &cfg.ResultsPerTrial}, {*pbtTrials, &cfg.PBTTrials}, {*pauseReports, &cfg.PauseReports}, {*inprocMax, &cfg.ScalingInprocMax},
		{*ovTrials, &cfg.OverheadTrials}, {*ovConc, &cfg.OverheadConcurrency}, {*ovReps, &cfg.OverheadReps}} {
		if o.flag != 0 {
			*o.dst = o.flag
		}
	}
	if *uploadMB != 0 {
		cfg.StorageUploadBytes = int64(*uploadMB) << 20
	}
	cfg.StorageURL = *storageURL
	if *pauseMB != 0 {
		cfg.PauseBytes = int64(*pauseMB) << 20
	}
	if *sizes != "" {
		cfg.CheckpointSizes = nil
		for _, s := range strings.Split(*sizes, ",") {
			mb, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(mb > 0) {
				fmt.Fprintf(stderr, "perfbench: -checkpoint-sizes %q: want positive numbers of MB separated by commas\n", *sizes)
				return 2
			}
			cfg.CheckpointSizes = append(cfg.CheckpointSizes, int64(mb*(1<<20)))
		}
	}
	if *scalingTrials != "" {
		cfg.ScalingTrials = nil
		for _, s := range strings.Split(*scalingTrials, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "perfbench: -scaling-trials %q: want positive integers separated by commas\n", *scalingTrials)
				return 2
			}
			cfg.ScalingTrials = append(cfg.ScalingTrials, n)
		}
	}
	cfg.Cluster.Partition = *clusterPartition
	if *clusterWindow != 0 {
		cfg.Cluster.CPUWindow = *clusterWindow
	}
	if *clusterLaunchTrials != 0 {
		cfg.Cluster.LaunchTrials = *clusterLaunchTrials
	}
	cfg.Cluster.CPUFilesMaxOpen = *clusterFilesMaxOpen
	cfg.Cluster.LaunchSqueueNoop = *clusterSqueueNoop
	if *clusterLaunchReps != 0 {
		cfg.Cluster.LaunchReps = *clusterLaunchReps
	}
	if *clusterCPUTrials != "" {
		cfg.Cluster.CPUTrials = nil
		for _, s := range strings.Split(*clusterCPUTrials, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "perfbench: -cluster-cpu-trials %q: want positive integers separated by commas\n", *clusterCPUTrials)
				return 2
			}
			cfg.Cluster.CPUTrials = append(cfg.Cluster.CPUTrials, n)
		}
	}
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			cfg.Only = append(cfg.Only, strings.TrimSpace(s))
		}
	}
	cfg.Dir, cfg.CPUProfile, cfg.MemProfile, cfg.PlotDir = *dir, *cpu, *mem, *plots
	cfg.Command = strings.Join(append([]string{"perfbench"}, args...), " ")
	if !*quiet {
		cfg.Log = stderr
	}
	if _, err := Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "perfbench:", err)
		return 1
	}
	return 0
}

// bench is one run of the suite.
type bench struct {
	cfg     Config
	scratch string // the run's own directory, removed at the end
	out     io.Writer
	prof    profiler
	rows    []Row
	// scalingPoints and checkpoints are what the scaling and checkpoint
	// shapes measured, for the plots.
	scalingPoints []scalingPoint
	checkpoints   []sizeFigure
	// helpers are the helper programs built for the run, by package.
	helpers map[string]string
}

func (b *bench) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, "perfbench: "+format+"\n", args...)
	}
}

// want reports whether the shape (variant "" for the whole shape) is
// selected.
func (b *bench) want(shape, variant string) bool {
	if len(b.cfg.Only) == 0 {
		return shape != ShapeProcess && shape != ShapeStorage && shape != ShapeCluster
	}
	for _, o := range b.cfg.Only {
		s, v, hasVariant := strings.Cut(o, "/")
		if s != shape {
			continue
		}
		if !hasVariant || variant == "" || v == variant {
			return true
		}
	}
	return false
}

// add records a row and prints it.
func (b *bench) add(r Row) {
	b.rows = append(b.rows, r)
	fmt.Fprintln(b.out, formatRow(r))
}

// Run runs the shapes cfg selects, printing each figure as it is measured
// and the summary table at the end to w, and returns the rows.
func Run(ctx context.Context, cfg Config, w io.Writer) ([]Row, error) {
	if cfg.Trials < 1 || cfg.Concurrency < 1 || cfg.ResultTrials < 1 || cfg.ResultsPerTrial < 1 || cfg.PBTTrials < 1 || cfg.Reps < 1 ||
		cfg.PauseBytes < 16 || cfg.PauseTrials < 1 || cfg.PauseReports < 1 || len(cfg.CheckpointSizes) == 0 ||
		len(cfg.ScalingTrials) == 0 || slices.Min(cfg.ScalingTrials) < 1 || cfg.ScalingResultsPerTrial < 1 ||
		cfg.OverheadTrials < 1 || cfg.OverheadConcurrency < 1 || cfg.OverheadReps < 1 || cfg.OverheadSleep <= 0 {
		return nil, fmt.Errorf("every size must be positive (trials %d, concurrency %d, result trials %d, results per trial %d, PBT trials %d, reps %d, pause bytes %d, pause trials %d, pause reports %d, %d checkpoint sizes, scaling trials %v, scaling results per trial %d, overhead trials %d, concurrency %d, reps %d, sleep %v)",
			cfg.Trials, cfg.Concurrency, cfg.ResultTrials, cfg.ResultsPerTrial, cfg.PBTTrials, cfg.Reps, cfg.PauseBytes, cfg.PauseTrials, cfg.PauseReports, len(cfg.CheckpointSizes),
			cfg.ScalingTrials, cfg.ScalingResultsPerTrial, cfg.OverheadTrials, cfg.OverheadConcurrency, cfg.OverheadReps, cfg.OverheadSleep)
	}
	known := ShapeNames()
	for _, o := range cfg.Only {
		if s, _, _ := strings.Cut(o, "/"); !slices.Contains(known, s) {
			return nil, fmt.Errorf("-only %q: unknown shape %q (known: %s)", o, s, strings.Join(known, ", "))
		}
	}
	root := cfg.Dir
	if root == "" {
		root = os.TempDir()
	}
	scratch, err := os.MkdirTemp(root, "perfbench-")
	if err != nil {
		return nil, fmt.Errorf("scratch directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	b := &bench{cfg: cfg, scratch: scratch, out: w, prof: profiler{cpu: cfg.CPUProfile, mem: cfg.MemProfile}}
	if b.want(ShapeStorage, "") {
		if len(cfg.StorageCommitSizes) == 0 || slices.Min(cfg.StorageCommitSizes) < 1 || len(cfg.StorageCommitFiles) == 0 ||
			slices.Min(cfg.StorageCommitFiles) < 1 || len(cfg.StorageLinkSizes) == 0 || slices.Min(cfg.StorageLinkSizes) < 1 ||
			cfg.StorageUploadBytes < 1 || cfg.StorageTrials < 2 || cfg.StorageReportEvery <= 0 {
			return nil, fmt.Errorf("storage: every size must be positive (commit sizes %v, files %v, link sizes %v, upload bytes %d, report every %v) and trials at least 2 (%d)",
				cfg.StorageCommitSizes, cfg.StorageCommitFiles, cfg.StorageLinkSizes, cfg.StorageUploadBytes, cfg.StorageReportEvery, cfg.StorageTrials)
		}
	}
	if b.want(ShapeCluster, "") {
		if err := cfg.Cluster.check(); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}

	mode := "full sizes"
	if cfg.Smoke {
		mode = "smoke sizes"
	}
	if cfg.Command != "" {
		fmt.Fprintln(w, "$ "+cfg.Command)
	}
	fmt.Fprintf(w, "hone %s; started %s; load average %s\n", describeRevision(ctx), time.Now().UTC().Format("2006-01-02 15:04 MST"), loadAverage())
	fmt.Fprintf(w, "perfbench: %s/%s, %d CPUs, GOMAXPROCS %d, %s; %s, %s (figures are medians)\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), mode, plural(cfg.Reps, "repetition"))
	fmt.Fprintf(w, "scratch: %s on %s\n", scratch, describeFS(scratch))
	fmt.Fprintln(w, "ratio = hone ÷ baseline: below 1 for a rate means slower than the baseline; above 1 for a cost (ns, s, bytes) means costlier")

	shapes := []struct {
		name string
		run  func(context.Context) error
	}{
		{ShapeBookkeeping, b.bookkeeping},
		{ShapeResults, b.results},
		{ShapeScaling, b.scaling},
		{ShapeCheckpoint, b.checkpoint},
		{ShapeJournal, b.journal},
		{ShapeMemory, b.memory},
		{ShapePausing, b.pausing},
		{ShapeOverhead, b.overhead},
		{ShapeProcess, b.process},
		{ShapeStorage, b.storage},
		{ShapeCluster, b.cluster},
	}
	for _, s := range shapes {
		if !b.want(s.name, "") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return b.rows, err
		}
		fmt.Fprintf(w, "\n## %s\n", s.name)
		start := time.Now()
		if err := s.run(ctx); err != nil {
			return b.rows, fmt.Errorf("%s: %w", s.name, err)
		}
		b.logf("%s done in %v", s.name, time.Since(start).Round(time.Millisecond))
	}
	if len(b.rows) > 0 {
		fmt.Fprintln(w)
		writeTable(w, b.rows)
	}
	if cfg.PlotDir != "" {
		paths, err := b.writePlots(cfg.PlotDir)
		if err != nil {
			return b.rows, err
		}
		if len(paths) > 0 {
			fmt.Fprintf(w, "\nplots: %s\n", strings.Join(paths, ", "))
		}
	}
	return b.rows, nil
}

// process runs the subprocess shapes of bench/process and passes its
// output through; its figures are not in the table.
func (b *bench) process(ctx context.Context) error {
	pc := process.DefaultConfig()
	if b.cfg.Smoke {
		pc = process.SmokeConfig()
	}
	pc.Log = b.cfg.Log
	fmt.Fprintln(b.out, "(bench/process, as go run ./process/cmd/procbench prints it; not in the table)")
	return process.Run(ctx, pc, b.out)
}

// formatRow renders a row as the lines printed when it is measured.
func formatRow(r Row) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s: %s %s", r.Name, formatNum(r.Value), r.Unit)
	if len(r.Samples) > 1 {
		fmt.Fprintf(&s, " (samples %s)", formatSamples(r.Samples))
	}
	fmt.Fprintf(&s, "\n  baseline: %s: %s %s", r.BaseName, formatNum(r.Base), r.Unit)
	if len(r.BaseSamples) > 1 {
		fmt.Fprintf(&s, " (samples %s)", formatSamples(r.BaseSamples))
	}
	fmt.Fprintf(&s, "\n  ratio %s", formatRatio(r.Ratio()))
	switch r.Verdict() {
	case "yes":
		fmt.Fprintf(&s, "; target %s: met", r.Target.Text)
	case "no":
		fmt.Fprintf(&s, "; target %s: MISSED", r.Target.Text)
	default:
		if r.Target.Text != "" {
			fmt.Fprintf(&s, "; target: %s", r.Target.Text)
		}
	}
	if r.Ray != "" {
		fmt.Fprintf(&s, "\n  Ray: %s", r.Ray)
	}
	if r.Expected != 0 || r.Observed != 0 {
		fmt.Fprintf(&s, "\n  checked: %d observed = %d expected", r.Observed, r.Expected)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&s, "\n  note: %s", n)
	}
	return s.String()
}

// writeTable writes the summary table.
func writeTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| shape | figure | baseline | ratio | target | met? |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		target := r.Target.Text
		if target == "" {
			target = "—"
		}
		fmt.Fprintf(w, "| %s: %s | %s %s | %s %s (%s) | %s | %s | %s |\n", r.Shape, r.Name, formatNum(r.Value), r.Unit,
			formatNum(r.Base), r.Unit, r.BaseName, formatRatio(r.Ratio()), target, r.Verdict())
	}
}

// formatNum renders a figure with about three significant digits.
func formatNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case a >= 1e7:
		return strconv.FormatFloat(v, 'e', 2, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func formatSamples(s []float64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = formatNum(v)
	}
	return strings.Join(parts, ", ")
}

// formatRatio renders a ratio with two significant digits.
func formatRatio(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// median returns the median of s (NaN when empty).
func median(s []float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	c := slices.Clone(s)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// plural returns "1 trial", "2 trials".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// mb renders a byte count in MB (MiB), e.g. "80 MB", "0.0625 MB".
func mb(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'g', 4, 64) + " MB"
}
