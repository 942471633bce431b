package spec

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// objectivesTable renders the table of docs/MULTI_OBJECTIVE.md for one
// kind of plugin (searcher, scheduler) from the registry's Objectives
// fields, by name.
func objectivesTable(kind string, how map[string]string) string {
	names := make([]string, 0, len(how))
	for n := range how {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | with several objectives |\n|---|---|\n", kind)
	for _, n := range names {
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, how[n])
	}
	return b.String()
}

// TestMultiObjectiveDoc keeps the tables of docs/MULTI_OBJECTIVE.md that
// say which searchers and schedulers take several objectives true to the
// registry: a plugin that gains hone.MultiObjective, with its Objectives
// field, fails this test until its row is pasted in (the failure prints
// the table to paste).
func TestMultiObjectiveDoc(t *testing.T) {
	data, err := os.ReadFile("../docs/MULTI_OBJECTIVE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, c := range []struct {
		kind string
		how  map[string]string
	}{
		{"searcher", MultiObjectiveSearchers()},
		{"scheduler", MultiObjectiveSchedulers()},
	} {
		begin, end := "<!-- begin "+c.kind+"s -->\n", "<!-- end "+c.kind+"s -->"
		_, rest, ok := strings.Cut(doc, begin)
		got, _, ok2 := strings.Cut(rest, end)
		if !ok || !ok2 {
			t.Errorf("docs/MULTI_OBJECTIVE.md has no %q ... %q", begin, end)
			continue
		}
		if want := objectivesTable(c.kind, c.how); got != want {
			t.Errorf("docs/MULTI_OBJECTIVE.md's table of %ss differs from the registry's; between its markers it should read:\n%s", c.kind, want)
		}
	}
}
