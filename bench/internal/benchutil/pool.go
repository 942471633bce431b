package benchutil

import (
	"context"
	"errors"
	"sync"
)

// RunAll runs run on every job, at most parallel at a time (but at least
// one goroutine when there are jobs). After each successful run, done is
// called with the job, its result and the number of runs finished so far;
// calls of done are serialized. The first failing run cancels the context
// passed to the others and no further jobs are started. RunAll returns
// the errors of all failed runs joined, else ctx's error if it was
// cancelled before every job was fed, else nil.
func RunAll[J, R any](ctx context.Context, parallel int, jobs []J, run func(ctx context.Context, j J) (R, error), done func(j J, r R, n int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex
		errs []error
		n    int
		wg   sync.WaitGroup
	)
	ch := make(chan J)
	for range min(parallel, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				r, err := run(ctx, j)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					cancel()
				} else {
					n++
					done(j, r, n)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return ctx.Err()
}
