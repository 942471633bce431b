package perf

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hone-tune/hone/executor/slurm/slurmcmd"
)

// squeueCall is what one squeue call cost.
type squeueCall struct {
	wall, cpu time.Duration // cpu: squeue's own, user and system
	jobs      int           // the jobs it listed
}

// clusterPoll measures job mode's poller on the Slurm cluster: with
// PollJobs held jobs of its own in the queue, one squeue over all of them
// (the poller's call, slurmcmd.QueueArgs with every id) against one
// squeue per job (a naive per-trial loop), PollCalls of each in
// alternating batches. The jobs are cancelled at the end.
func (b *bench) clusterPoll(ctx context.Context) (err error) {
	c := b.cfg.Cluster
	ctld := slurmctldPID(ctx)
	var ids []string
	defer func() {
		if cerr := cancelJobs(context.WithoutCancel(ctx), ids); err == nil {
			err = cerr
		}
	}()
	name := fmt.Sprintf("hone-bench-poll-%d", os.Getpid())
	where := "slurmctld is not on this machine: its CPU is not measured"
	if ctld > 0 {
		where = fmt.Sprintf("slurmctld (pid %d) runs on this machine, as do the nodes' slurmd", ctld)
	}
	fmt.Fprintf(b.out, "poll: held jobs named %s; %s\n", name, where)
	sizes := slices.Sorted(slices.Values(c.PollJobs))
	for _, n := range sizes {
		b.logf("cluster/poll: submitting held jobs up to %d", n)
		more, err := submitHeld(ctx, name, c.Partition, n-len(ids))
		ids = append(ids, more...)
		if err != nil {
			return err
		}
		var one, each []squeueCall
		var ctldOne, ctldEach, ctldIdle []time.Duration
		for batch := range 2 {
			// A batch of calls of each kind, then slurmctld alone for as
			// long as the longer batch took: its own background work.
			c0, t0 := procCPU(ctld), time.Now()
			for range c.PollCalls {
				call, err := squeue(ctx, ids)
				if err != nil {
					return err
				}
				if call.jobs != len(ids) {
					return fmt.Errorf("squeue over %d jobs listed %d", len(ids), call.jobs)
				}
				one = append(one, call)
			}
			c1, t1 := procCPU(ctld), time.Now()
			for i := range c.PollCalls {
				id := ids[(batch*c.PollCalls+i)*len(ids)/(2*c.PollCalls)]
				call, err := squeue(ctx, []string{id})
				if err != nil {
					return err
				}
				if call.jobs != 1 {
					return fmt.Errorf("squeue over job %s listed %d jobs", id, call.jobs)
				}
				each = append(each, call)
			}
			c2, t2 := procCPU(ctld), time.Now()
			time.Sleep(max(t1.Sub(t0), t2.Sub(t1)))
			c3, t3 := procCPU(ctld), time.Now()
			idle := float64(c3-c2) / t3.Sub(t2).Seconds()
			ctldOne = append(ctldOne, max(0, c1-c0-time.Duration(idle*t1.Sub(t0).Seconds())))
			ctldEach = append(ctldEach, max(0, c2-c1-time.Duration(idle*t2.Sub(t1).Seconds())))
			ctldIdle = append(ctldIdle, time.Duration(idle)) // CPU per second
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		cpuMs := func(calls []squeueCall) []float64 {
			out := make([]float64, len(calls))
			for i, c := range calls {
				out[i] = ms(c.cpu)
			}
			return out
		}
		wallMs := func(calls []squeueCall) float64 {
			w := make([]float64, len(calls))
			for i, c := range calls {
				w[i] = ms(c.wall)
			}
			return median(w)
		}
		oneCPU, eachCPU := cpuMs(one), cpuMs(each)
		naive := make([]float64, len(eachCPU))
		for i, v := range eachCPU {
			naive[i] = v * float64(n)
		}
		interval := c.PollInterval.Seconds()
		notes := []string{
			fmt.Sprintf("wall of one squeue over the %d jobs: %.1f ms; of one over a single job: %.1f ms, so the naive loop spends %.2f s "+
				"of every %.0f s interval waiting on squeue", n, wallMs(one), wallMs(each), float64(n)*wallMs(each)/1000, interval),
			fmt.Sprintf("per trial and second, as the driver CPU rows count: the poller %.1f µs CPU/s, the naive loop %.0f µs CPU/s",
				1000*median(oneCPU)/float64(n)/interval, 1000*median(eachCPU)/interval),
		}
		if ctld > 0 {
			notes = append(notes, fmt.Sprintf("slurmctld's CPU per call, beyond its own background (%.1f ms/s while the queue held "+
				"the %d jobs): %.2f ms for the call over every job, %.2f ms for a call over one, so %.1f ms per interval against %.0f "+
				"(/proc ticks of 10 ms over batches of %d calls: rough)", ms(medianDur(ctldIdle)), n,
				ms(medianDur(ctldOne))/float64(c.PollCalls), ms(medianDur(ctldEach))/float64(c.PollCalls),
				ms(medianDur(ctldOne))/float64(c.PollCalls), float64(n)*ms(medianDur(ctldEach))/float64(c.PollCalls), c.PollCalls))
		}
		notes = append(notes, "the jobs are held (pending), the experiment's own among none other of the user's; "+
			"squeue runs with the poller's arguments, slurmcmd.QueueArgs(Query{IDs: …})")
		b.add(Row{
			Shape: ShapeCluster,
			Name: fmt.Sprintf("job mode's poll of %d jobs: one squeue over every job per %v interval (squeue's CPU on the driver's machine)",
				n, c.PollInterval),
			Unit:  "ms CPU per interval",
			Value: median(oneCPU), Samples: oneCPU,
			BaseName: fmt.Sprintf("a naive per-trial loop: one squeue per job per interval (%d × the CPU of one squeue over one job)", n),
			Base:     median(naive), BaseSamples: naive,
			Notes: notes,
		})
	}
	return nil
}

// medianDur returns the median of s.
func medianDur(s []time.Duration) time.Duration {
	f := make([]float64, len(s))
	for i, d := range s {
		f[i] = float64(d)
	}
	return time.Duration(median(f))
}

// squeue runs squeue with job mode's poller's arguments over ids and
// returns its cost and how many jobs it listed.
func squeue(ctx context.Context, ids []string) (squeueCall, error) {
	cmd := exec.CommandContext(ctx, "squeue", slurmcmd.QueueArgs(slurmcmd.Query{IDs: ids})...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return squeueCall{}, fmt.Errorf("squeue: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	jobs, err := slurmcmd.ParseQueue(stdout.Bytes())
	if err != nil {
		return squeueCall{}, err
	}
	return squeueCall{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), jobs: len(jobs)}, nil
}

// submitHeld submits n held jobs named name (they stay pending and never
// run), two at a time, and returns their ids, those submitted before a
// failure included.
func submitHeld(ctx context.Context, name, partition string, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	client := slurmcmd.Client{}
	o := slurmcmd.JobOptions{Name: name, Comment: "hone-bench", Partition: partition, Output: "/dev/null", Error: "/dev/null",
		Extra: []string{"--hold"}}
	var mu sync.Mutex
	var ids []string
	var firstErr error
	var wg sync.WaitGroup
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range 2 {
		wg.Go(func() {
			for range next {
				id, err := client.Submit(ctx, o, []string{"true"})
				mu.Lock()
				if err == nil {
					ids = append(ids, id)
				} else if firstErr == nil {
					firstErr = err
				}
				stop := firstErr != nil
				mu.Unlock()
				if stop {
					return
				}
			}
		})
	}
	wg.Wait()
	return ids, firstErr
}

// cancelJobs cancels the jobs ids, a hundred per scancel.
func cancelJobs(ctx context.Context, ids []string) error {
	client := slurmcmd.Client{}
	for len(ids) > 0 {
		chunk := ids[:min(100, len(ids))]
		ids = ids[len(chunk):]
		if err := client.Cancel(ctx, "", chunk...); err != nil {
			return err
		}
	}
	return nil
}

// slurmctldPID returns the process id of the cluster's slurmctld when it
// runs on this machine (its pid file, from scontrol show config, names a
// running slurmctld), else 0.
func slurmctldPID(ctx context.Context) int {
	out, err := exec.CommandContext(ctx, "scontrol", "show", "config").Output()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "SlurmctldPidFile" {
			continue
		}
		b, err := os.ReadFile(strings.TrimSpace(v))
		if err != nil {
			return 0
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return 0
		}
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "slurmctld" {
			return 0
		}
		return pid
	}
	return 0
}
