package sweep

import (
	"context"
	"errors"
	"sync"
)

// parallel runs f(0..n-1) on jobs goroutines and returns the errors of
// the calls; after the first error, or once ctx is done, no new call
// starts.
func parallel(ctx context.Context, jobs, n int, f func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue // cancelled while i was handed over
				}
				if errs[i] = f(i); errs[i] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}
