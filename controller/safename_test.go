package controller

import (
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

// TestSafeName: safeName replaces runs of unsafe characters exactly as
// the regular expression [^A-Za-z0-9_.=,+-]+ → "_" would.
func TestSafeName(t *testing.T) {
	unsafe := regexp.MustCompile(`[^A-Za-z0-9_.=,+-]+`)
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z=,./ @\[\]{}é-]{0,20}`)).Draw(t, "s")
		if got, want := safeName(s), unsafe.ReplaceAllString(s, "_"); got != want {
			t.Fatalf("safeName(%q) = %q, want %q", s, got, want)
		}
	})
}
