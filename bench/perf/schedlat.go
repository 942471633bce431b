package perf

import (
	"math"
	"runtime/metrics"
	"slices"
)

// schedLatencies is the runtime metric of how long goroutines waited,
// runnable, for a CPU.
const schedLatencies = "/sched/latencies:seconds"

// schedSnapshot reads the scheduling latency histogram of the process.
func schedSnapshot() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: slices.Clone(h.Counts), Buckets: h.Buckets}
}

// schedQuantile returns the p-quantile, in milliseconds, of the scheduling
// latencies recorded between the snapshots a and b (the upper bound of
// the bucket holding it; NaN when nothing was recorded or a snapshot is
// missing).
func schedQuantile(a, b *metrics.Float64Histogram, p float64) float64 {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return math.NaN()
	}
	d := make([]uint64, len(b.Counts))
	var total uint64
	for i := range d {
		d[i] = b.Counts[i] - a.Counts[i]
		total += d[i]
	}
	if total == 0 {
		return math.NaN()
	}
	want := uint64(math.Ceil(p * float64(total)))
	var cum uint64
	for i, c := range d {
		cum += c
		if cum >= want {
			up := b.Buckets[i+1]
			if math.IsInf(up, 1) {
				up = b.Buckets[i]
			}
			return up * 1000
		}
	}
	return math.NaN()
}
