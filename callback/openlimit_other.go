//go:build !unix

package callback

// defaultMaxOpen is how many trials keep their files open by default.
func defaultMaxOpen() int { return 256 }
