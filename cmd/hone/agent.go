package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-tune/hone/executor/agent"
)

// agentCmd is the node agent, which a cluster executor runs on a node in
// front of a trial's command when the experiment lives in an object
// store (package agent). hone starts it; users do not.
func (a *app) agentCmd() *cobra.Command {
	var logs bool
	var logEvery time.Duration
	var cache string
	cmd := &cobra.Command{
		Use:    "agent [--logs] [--cache DIR] -- COMMAND [ARG...]",
		Short:  "Run a trial on a cluster node for hone, committing its checkpoints to the experiment's object store",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code := agent.Run(cmd.Context(), agent.Options{
				Argv: args, Env: os.Environ(), Stdout: a.stdout, Stderr: a.stderr,
				Logs: logs, LogEvery: logEvery, CacheDir: cache,
			})
			if code != 0 {
				return exitWith(code)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&logs, "logs", false, "keep the trial's logs on the node and upload them to its directory in the store")
	cmd.Flags().StringVar(&cache, "cache", "", "the node's cache directory (default $"+agent.EnvCacheDir+", else hone-node-<uid> in the temporary directory)")
	cmd.Flags().DurationVar(&logEvery, "log-every", agent.DefaultLogEvery, "how often --logs uploads the logs while the trial runs")
	return cmd
}
