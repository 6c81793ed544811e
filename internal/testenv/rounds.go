package testenv

import (
	"testing"
	"time"
)

// Rounds follows a stream poller's caught-up rounds (set
// localstream.Poller.Caught to its Caught), for tests that wait until the
// poller has handed over everything written before, or until a condition
// holds, instead of sleeping.
type Rounds struct{ ch chan struct{} }

// NewRounds returns a Rounds to give a poller.
func NewRounds() *Rounds { return &Rounds{ch: make(chan struct{}, 1)} }

// Caught records one caught-up round (the poller's hook).
func (r *Rounds) Caught() {
	select {
	case r.ch <- struct{}{}:
	default: // a waiter takes one pending round at a time
	}
}

// Settled returns once a round that began after the call has caught up:
// every record written to the stream before the call has been handed
// over, and what its consumers did with it is done. It fails the test
// when limit passes first.
func (r *Rounds) Settled(t testing.TB, limit time.Duration) {
	t.Helper()
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	select { // a round that ended before the call says nothing
	case <-r.ch:
	default:
	}
	// The first round to end may have begun before the call; the next one
	// began after it ended.
	for range 2 {
		select {
		case <-r.ch:
		case <-timeout.C:
			t.Fatalf("the stream poller did not catch up within %s", limit)
		}
	}
}

// Until returns once cond holds, checking it again after every caught-up
// round, and fails the test when limit passes first.
func (r *Rounds) Until(t testing.TB, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for !cond() {
		select {
		case <-r.ch:
		case <-timeout.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
