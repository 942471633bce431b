package search

import (
	"fmt"
	"slices"

	"github.com/hone-tune/hone"
)

// CheckObjectives is the hone.MultiObjective check of a searcher that is
// built for its objectives and constraints (own, ownCS): the
// experiment's (objs, cs) must be the same, each objective with its mode,
// each constraint with its bounds. Its error is a *hone.ParamError of
// plugin naming objectives or constraints.
func CheckObjectives(plugin string, own hone.Objectives, ownCS hone.Constraints, objs hone.Objectives, cs hone.Constraints) error {
	if !slices.Equal(own.WithDefaults(), objs.WithDefaults()) {
		return &hone.ParamError{Plugin: plugin, Param: "objectives", Err: fmt.Errorf("built for objectives %v, the experiment has %v: build it with the experiment's", own, objs)}
	}
	if !slices.EqualFunc(ownCS, cs, func(a, b hone.Constraint) bool { return a.String() == b.String() }) {
		return &hone.ParamError{Plugin: plugin, Param: "constraints", Err: fmt.Errorf("built for constraints %v, the experiment has %v: build it with the experiment's", ownCS, cs)}
	}
	return nil
}
