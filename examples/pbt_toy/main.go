// Command pbt_toy reproduces the toy experiment of the PBT paper
// (Jaderberg et al. 2017, "Population Based Training of Neural Networks",
// Fig. 2) with hone.
//
// θ ∈ R² starts at (0.9, 0.9). The objective is Q(θ) = 1.2 − (θ0² + θ1²),
// but training only sees the surrogate Q̂(θ|h) = 1.2 − (h0θ0² + h1θ1²) and
// takes gradient steps θ ← θ + η∇Q̂. The hyperparameter is h. Two workers
// start with h = (1, 0) and h = (0, 1): each fixes one half of θ only.
// Every 4 steps the population may exploit (the worse worker copies the
// better one's θ and h) and explore (h gets Gaussian noise). Four
// strategies spend the same compute:
//
//   - PBT: exploit and explore, with hone's PBT scheduler;
//   - explore only: h is perturbed, θ is never copied;
//   - exploit only: PBT with an explore that changes nothing;
//   - grid search: the two h values, each trained alone.
//
// Each strategy is a real hone experiment (runner, in-process executor,
// checkpoints of θ on disk) in <dir>/<strategy>. The command reads the
// results back with package results, prints a table and writes three
// plots: θ trajectories, Q over steps, and the lineage of PBT's workers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	def := DefaultParams()
	dir := flag.String("dir", filepath.Join("hone_results", "pbt_toy_go"), "output directory: one experiment per strategy, and the plots; must not hold a previous run")
	plots := flag.String("plots", "", "directory for the PNG plots (default: -dir)")
	seed := flag.Uint64("seed", def.Seed, "seed of hone and of every perturbation")
	steps := flag.Int("steps", def.Steps, "gradient steps per worker")
	eta := flag.Float64("eta", def.Eta, "learning rate η")
	interval := flag.Int("interval", def.Interval, "steps between exploit/explore rounds")
	sigma := flag.Float64("sigma", def.Sigma, "standard deviation of the Gaussian noise explore adds to h")
	seeds := flag.Int("seeds", 1, "with N > 1, run the comparison for N seeds from -seed on (in <dir>/seed_<seed>) and print how often each strategy reaches the threshold, instead of one table and the plots")
	verbose := flag.Bool("v", false, "print hone's experiment logs (every exploit and explore)")
	flag.Parse()
	p := Params{Seed: *seed, Steps: *steps, Eta: *eta, Interval: *interval, Sigma: *sigma}
	log := io.Discard
	if *verbose {
		log = os.Stderr
	}
	if *plots == "" {
		*plots = *dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *seeds > 1 {
		err = sweep(ctx, os.Stdout, *dir, p, *seeds, log)
	} else {
		err = run(ctx, os.Stdout, *dir, *plots, p, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbt_toy:", err)
		os.Exit(1)
	}
}

// run compares the strategies in dir, prints the table to out and writes
// the plots into plotDir.
func run(ctx context.Context, out io.Writer, dir, plotDir string, p Params, log io.Writer) error {
	fmt.Fprintf(out, "seed %d, %d steps, η = %g, exploit/explore every %d steps, explore noise σ = %g\n\n",
		p.Seed, p.Steps, p.Eta, p.Interval, p.Sigma)
	runs, err := Compare(ctx, dir, p, log)
	if err != nil {
		return err
	}
	if err := WriteTable(out, runs); err != nil {
		return err
	}
	files, err := WritePlots(plotDir, runs)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, f := range files {
		fmt.Fprintln(out, "wrote", f)
	}
	return nil
}

// sweep runs the comparison for n seeds from p.Seed on, each in
// dir/seed_<seed>, and prints per strategy how many seeds reached the
// threshold and the median first step among those that did.
func sweep(ctx context.Context, out io.Writer, dir string, p Params, n int, log io.Writer) error {
	fmt.Fprintf(out, "seeds %d…%d, %d steps, η = %g, exploit/explore every %d steps, explore noise σ = %g\n\n",
		p.Seed, p.Seed+uint64(n)-1, p.Steps, p.Eta, p.Interval, p.Sigma)
	var all [][]*Run
	for i := range n {
		q := p
		q.Seed = p.Seed + uint64(i)
		runs, err := Compare(ctx, filepath.Join(dir, fmt.Sprintf("seed_%d", q.Seed)), q, log)
		if err != nil {
			return fmt.Errorf("seed %d: %w", q.Seed, err)
		}
		all = append(all, runs)
	}
	return WriteSweepTable(out, all)
}
