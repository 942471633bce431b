package runner

import "time"

// SetFlushEvery sets how long results may wait in buffered callbacks.
func SetFlushEvery(o *Options, d time.Duration) { o.flushEvery = d }
