//go:build !linux

// Command fsyncorders times ways of committing a checkpoint directory
// durably; it needs Linux (syncfs(2)).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "fsyncorders: Linux only")
	os.Exit(2)
}
