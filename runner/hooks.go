package runner

// Preparer is implemented by executors that keep files of their own in
// the experiment directory (the process executor: a record of each trial
// process, the trials' sockets). Run and Resume call Prepare with the
// experiment directory before the journal is read or any trial starts;
// on Resume it ends what a killed run left running, before the staging
// directories of that run are cleared. An error stops Run or Resume.
type Preparer interface {
	Prepare(dir string) error
}

// Interrupter is implemented by executors that signal their trials when
// the experiment is interrupted (the process executor: SIGTERM to every
// trial at once, SIGKILL after its stop grace). The runner calls
// Interrupt once the controller has asked the running trials to save and
// stop.
type Interrupter interface {
	Interrupt()
}

// prepareExecutor calls the executor's Prepare, if it has one.
func (r *runner) prepareExecutor() error {
	if p, ok := r.exec.(Preparer); ok {
		return p.Prepare(r.opts.Dir)
	}
	return nil
}

// interruptExecutor calls the executor's Interrupt, if it has one.
func (r *runner) interruptExecutor() {
	if i, ok := r.exec.(Interrupter); ok {
		i.Interrupt()
	}
}
