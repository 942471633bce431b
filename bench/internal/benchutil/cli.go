package benchutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Main runs a benchmark command: run gets a context cancelled on an
// interrupt, the command-line arguments, stdout and stderr. If run fails,
// Main prints the error prefixed with name to stderr (unless it is
// flag.ErrHelp) and exits with status 2.
func Main(name string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, name+":", err)
		}
		os.Exit(2)
	}
}

// ParseFlags parses args with fs, which takes no positional arguments;
// unexpected ones are reported on stderr prefixed with fs's name. It
// returns ok when the command should go on, else the exit status: 0 after
// -help, 2 after a usage error.
func ParseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (status int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}
