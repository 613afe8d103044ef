package dataset

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
)

// batchPool runs a scan's calls on record batches on several goroutines.
type batchPool struct {
	work   chan pooledBatch
	wg     sync.WaitGroup
	failed atomic.Bool
	mu     sync.Mutex
	errK   int // batch of err
	err    error
}

type pooledBatch struct {
	k   int
	rec arrow.Record
}

func newBatchPool(workers int, fn func(w, k int, rec arrow.Record) error) *batchPool {
	// one batch waiting per worker: the dispatcher decodes ahead a little,
	// and few records are held at once
	p := &batchPool{work: make(chan pooledBatch, workers)}
	for w := range workers {
		p.wg.Go(func() {
			for b := range p.work {
				if !p.failedBefore(b.k) {
					p.fail(b.k, p.call(fn, w, b))
				}
				b.rec.Release()
			}
		})
	}
	return p
}

// call runs fn on one batch; a panic (on malformed data met before its
// checksum is verified) becomes an error, as on the scanning goroutine.
func (p *batchPool) call(fn func(w, k int, rec arrow.Record) error, w int, b pooledBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt arrow data in record batch %d: %v", b.k, r)
		}
	}()
	return fn(w, b.k, b.rec)
}

// fail records the error of batch k, keeping the one of the earliest batch
// so that a failing scan reports the same error on every run.
func (p *batchPool) fail(k int, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	if p.err == nil || k < p.errK {
		p.err, p.errK = err, k
	}
	p.mu.Unlock()
	p.failed.Store(true)
}

// failedBefore reports whether a batch before k failed. Batches after a
// failure are skipped, those before it still run: batches are handed out in
// order, so the error returned is always the earliest batch's.
func (p *batchPool) failedBefore(k int) bool {
	if !p.failed.Load() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errK < k
}

// send hands batch k to a worker, which releases it; after a failure it
// returns the error (the scan stops) and releases the batch itself.
func (p *batchPool) send(k int, rec arrow.Record) error {
	if p.failed.Load() {
		rec.Release()
		return errPoolFailed
	}
	p.work <- pooledBatch{k, rec}
	return nil
}

// errPoolFailed stops the dispatcher; wait returns the worker's error.
var errPoolFailed = errors.New("a worker failed")

// wait lets the workers finish and returns the first batch's error.
func (p *batchPool) wait() error {
	close(p.work)
	p.wg.Wait()
	return p.err
}
