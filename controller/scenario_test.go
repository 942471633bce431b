package controller_test

import (
	"flag"
	"testing"

	"github.com/hone-tune/hone/internal/scenario"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the scenario scripts in testdata/")

// TestScenarios runs the scripts in testdata/, one per rule of
// docs/SEMANTICS.md §1–§3 (see each file's header).
func TestScenarios(t *testing.T) { scenario.Run(t, "testdata/*.txt", *rewrite, nil) }
