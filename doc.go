// Package hone holds the domain types and the small plugin interfaces of the
// hone hyperparameter tuner. It imports only the standard library.
//
// The pieces fit together as follows. A [Searcher] proposes configurations,
// a [Scheduler] decides what happens to each running trial after each
// [Result], an [Executor] runs trials, and a [Store] keeps checkpoints. The
// controller (package controller) is a pure state machine that owns every
// [Trial] and is the only place a trial's [Status] changes; the runner
// (package runner) is the one goroutine that feeds it events and carries out
// its actions. Implementations live in subpackages that do not know each
// other; cmd/hone and the examples wire them together.
package hone
