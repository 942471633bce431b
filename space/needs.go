package space

import (
	"slices"
	"strings"
)

// Needs returns a copy of the Func (or FuncRand) domain d that declares
// the parameters its function reads, by dotted key path: "b",
// "model.width", or "layers.0" for the first element of a list. A Func
// runs after every Func it needs: one at a needed path, under it (a needed
// sub-space holding Funcs) or above it (a Func producing the map that holds
// the needed key). Validate rejects a need that names nothing in the space,
// a cycle of needs, and needs on a domain that is not a Func.
func (d Domain) Needs(paths ...string) Domain {
	d.needs = slices.Clone(paths)
	return d
}

// names reports whether the dotted path p names a parameter of the space
// whose leaves are ls, a sub-space above some of them, or a key inside a
// constant or Func value.
func names(ls []leaf, p string) bool {
	want := strings.Split(p, ".")
	for _, l := range ls {
		if related(l.path, want) {
			return true
		}
	}
	return false
}

// related reports whether one of the paths is a prefix of (or equal to)
// the other.
func related(a, b []string) bool {
	n := min(len(a), len(b))
	return slices.Equal(a[:n], b[:n])
}

// funcOrder orders the Func leaves (given in path order) so that each runs
// after the Funcs it needs, keeping path order wherever the needs allow
// (the smallest such order, comparing positions in path order). If the
// needs form a cycle, the error names its Funcs, and the order ends with
// the Funcs left, in path order.
func funcOrder(funcs []leaf) ([]leaf, error) {
	declared := false
	for _, f := range funcs {
		if len(f.dom.needs) > 0 {
			declared = true
			break
		}
	}
	if !declared {
		return funcs, nil
	}
	// deps[i] lists the Funcs i needs.
	deps := make([][]int, len(funcs))
	for i, f := range funcs {
		for _, n := range f.dom.needs {
			want := strings.Split(n, ".")
			for j, g := range funcs {
				if related(g.path, want) && !slices.Contains(deps[i], j) {
					deps[i] = append(deps[i], j)
				}
			}
		}
	}
	done := make([]bool, len(funcs))
	out := make([]leaf, 0, len(funcs))
	for len(out) < len(funcs) {
		next := -1
		for i := range funcs {
			if !done[i] && !slices.ContainsFunc(deps[i], func(j int) bool { return !done[j] }) {
				next = i
				break
			}
		}
		if next < 0 {
			err := cycleError(funcs, deps, done)
			for i := range funcs {
				if !done[i] {
					out = append(out, funcs[i])
				}
			}
			return out, err
		}
		done[next] = true
		out = append(out, funcs[next])
	}
	return out, nil
}

// cycleError finds a cycle among the Funcs not done (each of which needs
// one that is not done) and names it: "a needs b, b needs a".
func cycleError(funcs []leaf, deps [][]int, done []bool) error {
	start := slices.Index(done, false)
	seen := map[int]int{} // Func -> its position on the walk
	var walk []int
	for i := start; ; {
		if at, ok := seen[i]; ok {
			walk = walk[at:]
			break
		}
		seen[i] = len(walk)
		walk = append(walk, i)
		for _, j := range deps[i] {
			if !done[j] {
				i = j
				break
			}
		}
	}
	parts := make([]string, len(walk))
	for k, i := range walk {
		parts[k] = pathString(funcs[i].path) + " needs " + pathString(funcs[walk[(k+1)%len(walk)]].path)
	}
	return errOf("func domains need each other in a cycle: %s", strings.Join(parts, ", "))
}
