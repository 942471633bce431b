// Package benchutil holds helpers shared by the benchmark packages and
// their commands: a bounded pool of parallel runs, number formatting for
// the report tables, a log-axis tick marker for the plots, and the
// start-up of a benchmark command.
package benchutil
