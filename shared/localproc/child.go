package localproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// child is one started stand-in process, the leader of a process group of
// its own. Three things make sure nothing of it outlives the process that
// started it, however that process ends:
//
//   - the kernel kills the child when its parent dies (Pdeathsig), so a
//     SIGKILLed dev server takes its stand-ins with it;
//   - when the child exits, whatever it leaves running in its group is
//     killed before it is reaped: `node` or `java` may be a wrapper (a
//     version manager's shim) whose own child holds the port, and
//     Pdeathsig reaches the direct child only;
//   - a record of it is kept while it runs (records.go), so the next start
//     kills what a dead run's wrapper left behind.
type child struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited, its group killed, and it was reaped
	record string        // its record file; "" when none was written

	mu     sync.Mutex
	reaped bool // its pid (and group id) may name another process now: signal it no more
}

// startChild starts cmd (its stdout dropped, its stderr shown) and writes
// its record into records.
func startChild(cmd *exec.Cmd, records, name string) (*child, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	if err := startOnLockedThread(cmd); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	var err error
	if c.record, err = writeRecord(records, name, cmd.Process.Pid); err != nil {
		// Still a child of this process: it dies with it, and only a
		// wrapper's own child would be missed at the next start.
		fmt.Fprintf(os.Stderr, "localproc: no record of %s: %v\n", name, err)
	}
	go c.wait()
	return c, nil
}

// wait waits for the child to exit, kills the rest of its group while the
// unreaped child still holds its pid (so the group id cannot name anyone
// else's processes yet), reaps it and removes its record.
func (c *child) wait() {
	if waitExited(c.cmd.Process.Pid) == nil {
		c.signalGroup(syscall.SIGKILL)
	}
	c.mu.Lock()
	c.reaped = true
	c.mu.Unlock()
	_ = c.cmd.Wait()
	removeRecord(c.record)
	close(c.exited)
}

// signal sends sig to the child itself.
func (c *child) signal(sig os.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return os.ErrProcessDone
	}
	return c.cmd.Process.Signal(sig)
}

// signalGroup sends sig to every process of the child's group.
func (c *child) signalGroup(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
}

// stop ends the child's group: SIGTERM, then SIGKILL after 5 s; it
// returns once the child is reaped.
func (c *child) stop() {
	c.signalGroup(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.signalGroup(syscall.SIGKILL)
		<-c.exited
	}
}

// waitExited blocks until process pid has exited, leaving it unreaped
// (waitid with WNOWAIT; the syscall package has no wrapper for it).
func waitExited(pid int) error {
	const pPID = 1     // idtype_t P_PID
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if e != syscall.EINTR {
			if e != 0 {
				return e
			}
			return nil
		}
	}
}

// starter is the one goroutine that starts every child, locked to its OS
// thread for good. Linux sends a child its Pdeathsig when the *thread* that
// forked it ends, not the process, and the Go runtime may end a thread
// while the process goes on; a thread that is never unlocked lives as long
// as the process, so the signal comes exactly when the process dies.
var starter = sync.OnceValue(func() chan<- threadCall {
	calls := make(chan threadCall)
	go func() {
		runtime.LockOSThread() // never unlocked: see starter
		for c := range calls {
			c.done <- c.fn()
		}
	}()
	return calls
})

type threadCall struct {
	fn   func() error
	done chan<- error
}

// onStarterThread runs fn on the starter's thread.
func onStarterThread(fn func() error) error {
	done := make(chan error, 1)
	starter() <- threadCall{fn: fn, done: done}
	return <-done
}

// startOnLockedThread runs cmd.Start on the starter's thread.
func startOnLockedThread(cmd *exec.Cmd) error {
	return onStarterThread(cmd.Start)
}

// EndWithParent has the kernel send this process sig when its parent
// ends (PR_SET_PDEATHSIG), as every child started here gets SIGKILL: a
// dev server run by `go run` is not left behind, with its stand-ins on
// their ports, when `go run` is killed. The setting belongs to the thread
// that makes it, hence the starter's thread, which lives as long as the
// process. A parent that ended before the setting took hold is caught by
// its pid having changed.
func EndWithParent(sig syscall.Signal) error {
	ppid := os.Getppid()
	err := onStarterThread(func() error {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(sig), 0); e != 0 {
			return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", e)
		}
		return nil
	})
	if err == nil && os.Getppid() != ppid {
		err = syscall.Kill(os.Getpid(), sig)
	}
	return err
}
