package chaos

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
)

// steps are the operations a seed interleaves, each with its weight:
// uploads most, so that there is always something to triage.
var steps = []struct {
	name   string
	weight int
	run    func(w *world)
}{
	{"upload", 5, (*world).stepUpload},
	{"reupload", 2, (*world).stepReupload},
	{"resume", 2, (*world).stepResume},
	{"patch", 3, (*world).stepPatch},
	{"bulk", 2, (*world).stepBulk},
	{"rule", 2, (*world).stepRule},
	{"bulkworker", 2, (*world).stepBulkWorker},
	{"accept", 2, (*world).stepAccept},
	{"time", 2, (*world).stepTime},
}

// TestChaos runs each seed's random interleaving of uploads (with and
// without source files, re-sent, ingested by workers killed midway and
// delivered again), triage (single, project decisions, bulk, the bulk
// worker killed midway, triage rules) and risk acceptances that the SLA
// job ends as the clock moves; it checks each operation's counts where
// they are checkable, and every counter against a recount every
// recountEvery steps and at the end.
func TestChaos(t *testing.T) {
	seeds, nSteps := seedSource()
	start := now()
	var ran, failed []uint64
	for {
		seed, ok := seeds()
		if !ok {
			break
		}
		ran = append(ran, seed)
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runSeed(t, seed, nSteps) }) {
			failed = append(failed, seed)
		}
	}
	// Printed, not logged: make chaos shows it without -v.
	fmt.Printf("chaos: %d seeds of %d steps in %s; seeds %v; failing seeds: %v\n", len(ran), nSteps, now().Sub(start).Round(time.Second), ran, failed)
}

// seedSource says which seeds run (see the flags) and how many steps
// each takes.
func seedSource() (next func() (uint64, bool), nSteps int) {
	random := *flagSeeds > 0 || *flagDuration > 0
	nSteps = shortSteps
	if random {
		nSteps = randomSteps
	}
	if *flagSteps > 0 {
		nSteps = *flagSteps
	}
	if *flagSeed != 0 {
		done := false
		return func() (uint64, bool) { d := done; done = true; return *flagSeed, !d }, nSteps
	}
	if !random {
		n := 0
		return func() (uint64, bool) {
			n++
			if n > len(shortSeeds) {
				return 0, false
			}
			return shortSeeds[n-1], true
		}, nSteps
	}
	start, n := now(), 0
	return func() (uint64, bool) {
		if (*flagSeeds > 0 && n >= *flagSeeds) || (*flagDuration > 0 && now().Sub(start) >= *flagDuration) {
			return 0, false
		}
		n++
		var b [8]byte
		_, _ = crand.Read(b[:])
		return binary.LittleEndian.Uint64(b[:])>>1 | 1, true // never 0, which -chaos.seed reads as none
	}, nSteps
}

// runSeed is one seed's scenario.
func runSeed(t *testing.T, seed uint64, nSteps int) {
	t.Logf("seed %d (replay: go test -run '^TestChaos$' ./internal/chaos -chaos.seed=%d -chaos.steps=%d)", seed, seed, nSteps)
	w := newWorld(t, seed)
	defer func() {
		if t.Failed() {
			t.Logf("seed %d failed at step %d; its steps:\n%s", seed, w.step, strings.Join(w.trail, "\n"))
		}
	}()
	total := 0
	for _, s := range steps {
		total += s.weight
	}
	spent, due := map[string]time.Duration{}, false
	for w.step = 1; w.step <= nSteps; w.step++ {
		r := w.rng.IntN(total)
		for _, s := range steps {
			if r < s.weight {
				t0 := now()
				s.run(w)
				d := now().Sub(t0)
				spent[s.name] += d
				if d > time.Second {
					w.note("(%s took %s)", s.name, d.Round(time.Millisecond))
				}
				w.counts[s.name]++
				break
			}
			r -= s.weight
		}
		// Counters equal a recount only while no ingestion is half done: a
		// dead worker's journal is settled by the next delivery on its
		// branch (shared/store/findings/bulkcreate.go), so a recount that
		// falls due then waits for a step with none pending.
		due = due || w.step%recountEvery == 0
		if due && len(w.pending) == 0 {
			t0 := now()
			w.recount()
			spent["recount"] += now().Sub(t0)
			due = false
		}
	}
	t.Logf("seed %d did %v; time by step %v", seed, w.counts, spent)
	// The stream delivers every killed ingestion again in the end.
	for len(w.pending) > 0 {
		w.stepResume()
	}
	w.recount()
}

// recount checks every counter of the company against a recount of its
// issues (testenv.Recount: groups, trends, the due index, totals).
func (w *world) recount() {
	w.t.Helper()
	w.note("recount")
	testenv.Recount(w.t, w.st, w.co.ID)
}
