package mobench

import (
	"context"
	"reflect"
	"testing"

	"github.com/hone-tune/hone/bench/mofunctions"
)

// TestHoneMethods: hone's multi-objective methods spend the budget on
// valid configurations (Check), the same for the same seed, and tpe finds
// a front better than random search's on ZDT1 at 120 evaluations (seed 1).
func TestHoneMethods(t *testing.T) {
	p := mofunctions.ByName("zdt1")
	ctx := context.Background()
	hv := map[string]float64{}
	for _, m := range HoneMethods() {
		a, err := m.Run(ctx, p, 1, 120)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if err := Check(p, a); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		if len(a.Evals) != 120 {
			t.Errorf("%s: %d evaluations, want 120", m.Name, len(a.Evals))
		}
		b, err := m.Run(ctx, p, 1, 120)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Evals, b.Evals) {
			t.Errorf("%s: two runs of seed 1 differ", m.Name)
		}
		hv[m.Name] = a.Hypervolume(p)
	}
	t.Logf("hypervolumes %v", hv)
	if !(hv["tpe"] > hv["random"]) {
		t.Errorf("tpe's hypervolume %v is not above random's %v", hv["tpe"], hv["random"])
	}
}
