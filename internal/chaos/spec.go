package chaos

import (
	"fmt"
	"strings"
)

// Kinds of chaos experiment.
const (
	KindASHA     = "asha"
	KindBOHB     = "bohb"
	KindPBT      = "pbt"
	KindFailFast = "failfast"
	KindDiskFull = "diskfull"
	// KindPBTS3 and KindASHAS3 run the specs of KindPBT and KindASHA on
	// object storage (an s3:// URL), each hone process on a fresh cache
	// directory, as on another machine.
	KindPBTS3  = "pbt-s3"
	KindASHAS3 = "asha-s3"
)

// Kinds lists every kind of experiment, in the order a round runs them
// (the object-storage kinds take turns: see runsIn).
var kinds = []string{KindASHA, KindBOHB, KindPBT, KindFailFast, KindDiskFull, KindPBTS3, KindASHAS3}

// epochs is every trial's length in iterations; with max_t = epochs and
// reduction factor 3, the rungs of ASHA and HyperBand are 1, 3 and 9.
const epochs = 9

// specParams fill the spec of one experiment.
type specParams struct {
	kind      string
	name      string
	storage   string
	seed      uint64
	python    string
	trainer   string
	mark      string
	mode      string // max unless a refused-change spec flips it
	grace     string // stop_grace
	maxConc   int    // max_concurrent_trials
	extraEnv  string // an extra env line, for an allowed change
	failX     string // CHAOS_FAIL_X for fail_fast
	setupSecs float64
	stepSecs  float64
	// ckptEvery is the trainer's checkpoint_every; 0 means 1.
	ckptEvery int
}

// specYAML returns the spec of an experiment of p.kind.
func specYAML(p specParams) string {
	var b strings.Builder
	storage := p.storage
	if s3Base(p.kind) != "" {
		storage = fmt.Sprintf("%q", storage) // a URL's ? and & in a YAML string
	}
	fmt.Fprintf(&b, "name: %s\nstorage: %s\nmetric: score\nmode: %s\nseed: %d\n", p.name, storage, p.mode, p.seed)
	space := "  x: {uniform: [0.1, 1.0]}\n"
	kind := baseKind(p.kind)
	switch kind {
	case KindASHA, KindDiskFull:
		b.WriteString("num_samples: 6\n")
	case KindBOHB:
		b.WriteString("num_samples: 6\n")
	case KindPBT:
		b.WriteString("num_samples: 4\n")
	case KindFailFast:
		b.WriteString("num_samples: 1\n")
		space = "  x: {grid: [1, 2, 3, 4, 5]}\n"
	}
	b.WriteString("search_space:\n" + space)
	every := max(p.ckptEvery, 1)
	fmt.Fprintf(&b, "  epochs: %d\n  step_s: %g\n  setup_s: %g\n  checkpoint_every: %d\n", epochs, p.stepSecs, p.setupSecs, every)
	switch kind {
	case KindASHA, KindDiskFull:
		fmt.Fprintf(&b, "searcher: random\nscheduler:\n  name: asha\n  max_t: %d\n  grace_period: 1\n  reduction_factor: 3\n", epochs)
	case KindBOHB:
		fmt.Fprintf(&b, "searcher:\n  name: bohb\n  max_concurrent: 2\nscheduler:\n  name: hyperband_for_bohb\n  max_t: %d\n  reduction_factor: 3\n", epochs)
	case KindPBT:
		b.WriteString("searcher: random\nscheduler:\n  name: pbt\n  time_attr: training_iteration\n  perturbation_interval: 3\n" +
			"  quantile_fraction: 0.25\n  resample_probability: 0.25\n  hyperparam_mutations:\n    x: {uniform: [0.1, 1.0]}\n")
	case KindFailFast:
		b.WriteString("searcher: random\nscheduler: fifo\n")
	}
	fmt.Fprintf(&b, "max_concurrent_trials: %d\ncheckpoint:\n  num_to_keep: 2\n", p.maxConc)
	if p.kind == KindFailFast {
		b.WriteString("failure:\n  max_failures: 0\n  fail_fast: true\n")
	} else {
		b.WriteString("failure:\n  max_failures: 1\n")
	}
	fmt.Fprintf(&b, "command: [%q, %q]\nenv:\n  %s: %q\n  PYTHONDONTWRITEBYTECODE: \"1\"\n", p.python, p.trainer, markerEnv, p.mark)
	if p.failX != "" {
		fmt.Fprintf(&b, "  CHAOS_FAIL_X: %q\n  CHAOS_FAIL_AT: \"3\"\n", p.failX)
	}
	if p.extraEnv != "" {
		b.WriteString("  " + p.extraEnv + "\n")
	}
	fmt.Fprintf(&b, "stop_grace: %s\n", p.grace)
	return b.String()
}
