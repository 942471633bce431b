// Package benchutil holds helpers shared by the benchmark packages and
// their commands: a bounded pool of parallel runs, number formatting for
// the report tables, a log-axis tick marker for the plots, the start-up of
// a benchmark command, and the measurement of a method's own CPU time
// (CPUMeter, and the wrappers TimeSearcher and TimeScheduler that time
// every call into hone's searchers and schedulers).
package benchutil
