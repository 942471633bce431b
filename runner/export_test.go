package runner

import "time"

// SetFlushEvery sets how long results may wait in buffered callbacks.
func SetFlushEvery(o *Options, d time.Duration) { o.flushEvery = d }

// SetSnapshotEvery makes the runner take a snapshot whenever the journal
// has grown by n bytes and one can be taken, keep keep of them, and record
// the buffered callbacks' results safe every mark.
func SetSnapshotEvery(o *Options, n int64, keep int, mark time.Duration) {
	o.snapEvery, o.snapKeep, o.markEvery = n, keep, mark
}
