package blob

import (
	"slices"
	"testing"
)

func TestNewestSnapshotOnly(t *testing.T) {
	j := "experiment_state.jsonl"
	keys := []string{"spec.yaml", j + ".0000000000001000.snap", j + ".0000000000020000.snap", j + ".corrupt-1", j + ".00000000000300.snap", "other.snap"}
	got := newestSnapshotOnly(keys, j)
	want := []string{"spec.yaml", j + ".0000000000020000.snap", j + ".corrupt-1", j + ".00000000000300.snap", "other.snap"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := newestSnapshotOnly([]string{"a"}, j); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("no snapshot: %v", got)
	}
}
