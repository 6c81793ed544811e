package localproc

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logs collects a supervisor's messages.
type logs struct {
	mu  sync.Mutex
	all []string
}

func (l *logs) logf(format string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, format)
}

// waitUp waits until up (a NextUp channel) is closed, failing the test
// after a minute: the supervisor restarts in the background, and NextUp is
// its signal that a new child answers.
func waitUp(t *testing.T, what string, up <-chan struct{}) {
	t.Helper()
	select {
	case <-up:
	case <-time.After(time.Minute):
		t.Fatalf("no %s within a minute", what)
	}
}

func always(context.Context) bool { return true }

// A supervised child that is killed is started again with the same
// command; after Stop it stays stopped and supervision ends quietly.
func TestSuperviseRestarts(t *testing.T) {
	starts := 0
	var mu sync.Mutex
	p, err := Start(context.Background(), "sleeper", func() *exec.Cmd {
		mu.Lock()
		starts++
		mu.Unlock()
		return exec.Command("sleep", "600")
	}, 10*time.Second, always, nil)
	if err != nil {
		t.Fatal(err)
	}
	var l logs
	done := p.Supervise(context.Background(), l.logf)
	for round := 1; round <= 2; round++ {
		old, up := p.Pid(), p.NextUp() // taken before the kill, so the restart cannot be missed
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitUp(t, "restart", up)
		if p.Pid() == old {
			t.Fatalf("after kill %d: the killed child %d is still the current one", round, old)
		}
		mu.Lock()
		n := starts
		mu.Unlock()
		if n != round+1 {
			t.Fatalf("after kill %d: %d starts, want %d", round, n, round+1)
		}
	}
	pid := p.Pid()
	p.Stop()
	if err, ok := <-done; ok {
		t.Fatalf("supervision after Stop reported %v", err)
	}
	if p.Pid() != pid {
		t.Fatalf("a stopped child was started again")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still runs after Stop (kill 0: %v)", pid, err)
	}
}

// A child that cannot be started again is given up after
// MaxRestartFailures attempts, reported once with ErrGaveUp and its name.
// (Pauses 0.5+1+2+4+8 s.)
func TestSuperviseGivesUp(t *testing.T) {
	launches := 0
	p, err := Start(context.Background(), "the flaky one", func() *exec.Cmd {
		if launches++; launches == 1 {
			return exec.Command("sleep", "600")
		}
		return exec.Command("false") // every restart exits at once
	}, 10*time.Second, func(context.Context) bool { return launches == 1 }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var l logs
	done := p.Supervise(context.Background(), l.logf)
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err, ok := <-done
	if !ok || !errors.Is(err, ErrGaveUp) || !strings.Contains(err.Error(), "the flaky one") {
		t.Fatalf("supervision ended with %v (reported: %v), want ErrGaveUp naming the process", err, ok)
	}
	if _, ok := <-done; ok {
		t.Fatal("a second report")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	failed := 0
	for _, m := range l.all {
		if strings.Contains(m, "restart failed") {
			failed++
		}
	}
	// The kill, seconds after the start, is the first failure.
	if failed != MaxRestartFailures-1 {
		t.Fatalf("%d failed restarts logged before giving up, want %d: %q", failed, MaxRestartFailures-1, l.all)
	}
}

// A child that exits while starting is an error at once, not after limit.
func TestStartExited(t *testing.T) {
	_, err := Start(context.Background(), "quitter", func() *exec.Cmd { return exec.Command("false") },
		time.Hour, func(context.Context) bool { return false }, nil)
	if err == nil || !strings.Contains(err.Error(), "quitter exited while starting") {
		t.Fatalf("Start = %v, want an exit while starting", err)
	}
}
