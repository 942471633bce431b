package perf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/hone-tune/hone/executor/slurm"
)

// clusterLaunches runs bench/cmd/steplaunch inside an allocation (salloc,
// unless perfbench already runs in one) and turns its lines into rows:
// for every concurrency, hone's step-mode launches of the trial program
// against srun of true by hand and against srun of the same trial
// program by hand, and hone's launches of the command true against srun
// of true by hand.
func (b *bench) clusterLaunches(ctx context.Context) error {
	trialBin, err := b.helper(ctx, "./process/cmd/proctrial")
	if err != nil {
		return err
	}
	launchBin, err := b.helper(ctx, "./cmd/steplaunch")
	if err != nil {
		return err
	}
	dir, err := b.freshDir("launch")
	if err != nil {
		return err
	}
	defer removeDir(dir)
	c := b.cfg.Cluster
	ks := make([]string, len(c.LaunchConcurrency))
	for i, k := range c.LaunchConcurrency {
		ks[i] = strconv.Itoa(k)
	}
	argv := []string{launchBin, "-trial", trialBin, "-dir", dir, "-trials", strconv.Itoa(c.LaunchTrials),
		"-concurrency", strings.Join(ks, ","), "-reps", strconv.Itoa(c.LaunchReps), "-mem", strconv.Itoa(c.LaunchMemMB),
		"-idle-sruns", strconv.Itoa(c.IdleSruns), "-idle", c.IdleWindow.String()}
	if b.cfg.Log == nil {
		argv = append(argv, "-q")
	}
	if c.LaunchSqueueNoop {
		argv = append(argv, "-squeue-noop")
		fmt.Fprintln(b.out, "launch: DIAGNOSIS: hone's squeue calls (the lookup of each step's id and node) run a no-op squeue")
	}
	alloc := "the allocation perfbench runs in"
	if !slurm.InAllocation() {
		salloc := []string{"salloc", "--nodes=" + strconv.Itoa(c.Nodes), "--ntasks-per-node=" + strconv.Itoa(c.TasksPerNode),
			"--cpus-per-task=1", "--mem=" + strconv.Itoa(c.MemPerNodeMB) + "M", "--job-name=hone-bench-launch"}
		if c.Partition != "" {
			salloc = append(salloc, "--partition="+c.Partition)
		}
		alloc = strings.Join(salloc, " ")
		argv = append(append(salloc, "--"), argv...)
	}
	fmt.Fprintf(b.out, "launch: inside %s; each step --exclusive, 1 CPU, --mem=%dM; %d launches of each kind per repetition, "+
		"%s, the kinds taking turns launch by launch one at a time, in blocks of 3 × concurrency otherwise\n",
		alloc, c.LaunchMemMB, c.LaunchTrials, plural(c.LaunchReps, "repetition"))
	b.logf("cluster/launch: %s", strings.Join(argv, " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if b.cfg.Log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, b.cfg.Log)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, lastLines(stderr.String(), 15))
	}
	type key struct {
		what string
		k    int
	}
	samples := map[key][]float64{}
	selfMs, childMs := map[key][]float64{}, map[key][]float64{}
	memNote := "no memory figure"
	var idle, idleRSS, idlePSS []float64
	var idleWindow float64
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var l launchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("steplaunch printed %q: %w", sc.Text(), err)
		}
		switch l.Kind {
		case "launch":
			kk := key{l.What, l.Concurrency}
			samples[kk] = append(samples[kk], l.Rate)
			selfMs[kk] = append(selfMs[kk], l.SelfMs)
			childMs[kk] = append(childMs[kk], l.ChildMs)
		case "memory":
			memNote = fmt.Sprintf("%d trials sleeping a second, started at once through hone: %.1f s when they need no memory, %.1f s "+
				"when they need %d MB", l.Concurrency, l.WithoutMem, l.WithMem, c.LaunchMemMB)
			if l.WithoutMem > 1.4*l.WithMem {
				memNote += ": the steps that asked for no memory ran one per node (such a step takes all the allocation's memory on its node)"
			} else {
				memNote += ": trials without a memory resource run as many at once as with one"
			}
		case "idle-srun":
			idle, idleRSS, idlePSS, idleWindow = l.PerSecondUS, l.RSSKB, l.PSSKB, l.Window
		}
	}
	idleNote := "no idle-srun figure"
	if len(idle) > 0 {
		idleNote = fmt.Sprintf("step mode keeps one srun per running trial on the driver's machine: %d idle sruns (steps sleeping, "+
			"printing nothing) used %s µs CPU/s each over %.0f s, and %.1f MiB resident each, %.1f MiB of it its own "+
			"(proportional set size; median, srun and the watcher it forks)",
			len(idle), formatSamples(idle), idleWindow, median(idleRSS)/1024, median(idlePSS)/1024)
	}
	for _, k := range c.LaunchConcurrency {
		h, t, tr, ck, ht := samples[key{launchHone, k}], samples[key{launchSrunTrue, k}], samples[key{launchSrunTrial, k}],
			samples[key{launchSrunChecked, k}], samples[key{launchHoneTrue, k}]
		if len(h) == 0 || len(t) == 0 || len(tr) == 0 || len(ck) == 0 || len(ht) == 0 {
			return fmt.Errorf("%d at a time: steplaunch printed %d, %d, %d, %d and %d samples", k, len(h), len(t), len(tr), len(ck), len(ht))
		}
		ms := func(rate float64) float64 { return 1000 * float64(k) / rate }
		name := fmt.Sprintf("step-mode trial launches, %d at a time, launch to exit of a minimal trial (proctrial report 1: "+
			"connect, report once, exit), slurm.New driven directly", k)
		cpu := func(what string) string {
			return fmt.Sprintf("%s %.1f + %.1f ms", what, median(selfMs[key{what, k}]), median(childMs[key{what, k}]))
		}
		common := []string{
			"CPU per launch on the driver's machine, the launching process's + its children's (srun; squeue too for hone): " +
				strings.Join([]string{cpu(launchHone), cpu(launchHoneTrue), cpu(launchSrunTrue), cpu(launchSrunTrial), cpu(launchSrunChecked)}, ", "),
			fmt.Sprintf("per launch (wall × concurrency ÷ launches): hone %.0f ms, hone of true %.0f ms; by hand: srun true %.0f ms, "+
				"srun of the trial %.0f ms, srun of the trial behind the storage check %.0f ms",
				ms(median(h)), ms(median(ht)), ms(median(t)), ms(median(tr)), ms(median(ck))),
			fmt.Sprintf("srun of the trial behind the storage check job mode keeps at every start (/bin/sh -c 'test -d …; exec \"$@\"') "+
				"by hand: %s launches/s, %s of the trial by hand (paired: %s); hone ÷ that: %s (paired: %s)",
				formatNum(median(ck)), formatRatio(median(ck)/median(tr)), formatRatio(median(pairedRatios(ck, tr))),
				formatRatio(median(h)/median(ck)), formatRatio(median(pairedRatios(h, ck)))),
		}
		b.add(Row{
			Shape: ShapeCluster, Name: name, Unit: "launches/s",
			Value: median(h), Samples: h,
			BaseName: "srun --exclusive -N1 -n1 --cpus-per-task=1 --mem=" + strconv.Itoa(c.LaunchMemMB) + "M true by hand, as many at a time, taking turns",
			Base:     median(t), BaseSamples: t, Higher: true,
			Target: ratioAtLeast("≥ 0.9 of srun by hand", 0.9),
			Notes: append(common, "median of the paired ratios: "+formatRatio(median(pairedRatios(h, t))),
				fmt.Sprintf("srun of true runs no trial program and nothing connects: the same work by hand (the next row) is itself "+
					"%s of srun true, the floor of this ratio", formatRatio(median(tr)/median(t))),
				"hone's launch: the process executor's start (trial and staging directories, token, the trial's share of the TCP server, "+
					"log files), srun with hone's arguments, the trial as the step's task (each node's view of the storage was checked "+
					"once, at Prepare), its connection and report over TCP, the trial's end read back",
				idleNote, memNote),
		})
		b.add(Row{
			Shape: ShapeCluster, Name: name, Unit: "launches/s",
			Value: median(h), Samples: h,
			BaseName: "srun of the same trial program by hand (hone's srun arguments, no storage check), reporting once to a minimal TCP server",
			Base:     median(tr), BaseSamples: tr, Higher: true,
			Target: ratioAtLeast("≥ 0.9 of srun by hand", 0.9),
			Notes:  append(common, "median of the paired ratios: "+formatRatio(median(pairedRatios(h, tr)))),
		})
		b.add(Row{
			Shape: ShapeCluster, Name: fmt.Sprintf("step-mode launches of the command true as the trial, %d at a time, launch to exit, "+
				"slurm.New driven directly: what hone adds to launching a command", k),
			Unit: "launches/s", Value: median(ht), Samples: ht,
			BaseName: "srun --exclusive -N1 -n1 --cpus-per-task=1 --mem=" + strconv.Itoa(c.LaunchMemMB) + "M true by hand, as many at a time, taking turns",
			Base:     median(t), BaseSamples: t, Higher: true,
			Target: ratioAtLeast("≥ 0.9 of srun by hand", 0.9),
			Notes: []string{"median of the paired ratios: " + formatRatio(median(pairedRatios(ht, t))),
				fmt.Sprintf("per launch (wall × concurrency ÷ launches): hone %.0f ms, srun true by hand %.0f ms; CPU per launch on the "+
					"driver's machine: %s, %s", ms(median(ht)), ms(median(t)), cpu(launchHoneTrue), cpu(launchSrunTrue)),
				"the same command, the same step; hone adds the process executor's start (directories, token, log files, the trial's " +
					"environment), srun with hone's arguments (--job-name, --chdir, --kill-on-bad-exit, --quiet) and the trial's end " +
					"read back; true never connects"},
		})
	}
	return nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
