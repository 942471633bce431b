package spec

import (
	"flag"
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

var updateDoc = flag.Bool("update-doc", false, "rewrite docs/MULTI_OBJECTIVE.md's plugin tables from the registry")

// TestMultiObjectiveDoc keeps the tables of docs/MULTI_OBJECTIVE.md that
// say which searchers and schedulers take several objectives true to the
// registry: a plugin that gains hone.MultiObjective, with its Objectives
// field, fails this test until its row is pasted in (the failure prints
// the table to paste; -update-doc writes it).
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
		if want := objectivesTable(c.kind, c.how); got != want && *updateDoc {
			doc = strings.Replace(doc, begin+got+end, begin+want+end, 1)
			if err := os.WriteFile("../docs/MULTI_OBJECTIVE.md", []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if got != want {
			t.Errorf("docs/MULTI_OBJECTIVE.md's table of %ss differs from the registry's; between its markers it should read (go test ./spec -run TestMultiObjectiveDoc -update-doc writes it):\n%s", c.kind, want)
		}
	}
}
