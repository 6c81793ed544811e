package localproc

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays more parts, chosen by roleEnv: a stand-in that
// listens on a port, a dev server that starts one through Start and is
// then SIGKILLed, and a `go run` that starts a process with plain os/exec
// and is then SIGKILLed.
const (
	roleEnv  = "LOCALPROC_TEST_ROLE"
	portEnv  = "LOCALPROC_TEST_PORT"
	tokenEnv = "LOCALPROC_TEST_TOKEN" // what the listener answers, so a start knows it reached its own
	wrapEnv  = "LOCALPROC_TEST_WRAP"  // "true": the listener runs under a shell that does not exec it
	endEnv   = "LOCALPROC_TEST_END"   // "true": the listener calls EndWithParent first
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "listener":
		listen()
	case "parent":
		parent()
	case "plain-parent":
		plainParent()
	default:
		os.Exit(m.Run())
	}
}

// listen serves the port: every connection reads "token pid\n". Once it
// listens it says so on stdout, which a plain parent waits for (Start
// drops it and asks the port instead). Started by a plain parent, it
// first asks to end with it (EndWithParent).
func listen() {
	if os.Getenv(endEnv) == "true" {
		if err := EndWithParent(syscall.SIGKILL); err != nil {
			fmt.Fprintln(os.Stderr, "listener:", err)
			os.Exit(3)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv(portEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(3)
	}
	fmt.Println("listening")
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		fmt.Fprintf(c, "%s %d\n", os.Getenv(tokenEnv), os.Getpid())
		c.Close()
	}
}

// parent starts a listener through Start, prints "childpid listenerpid"
// and waits to be killed (its stdin stays open until then).
func parent() {
	port, _ := strconv.Atoi(os.Getenv(portEnv))
	p, err := startListener(context.Background(), port, os.Getenv(wrapEnv) == "true")
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		os.Exit(3)
	}
	fmt.Printf("%d %d\n", p.Pid(), p.listenerPid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(4) // the test kills this process; ending by itself is a failure
}

// plainParent starts a listener with plain os/exec (no Pdeathsig, no
// token), waits for its readiness line, prints its pid twice, as parent
// does, and waits to be killed.
func plainParent() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=listener", endEnv+"=true")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "plain parent:", err)
		os.Exit(3)
	}
	// A listener that fails exits, closing the pipe: no line, no hang.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "listening\n" {
		fmt.Fprintf(os.Stderr, "plain parent: the listener does not listen (%q, %v)\n", line, err)
		os.Exit(3)
	}
	fmt.Printf("%d %d\n", cmd.Process.Pid, cmd.Process.Pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(4)
}

// listenerProcess is a started listener and the pid that holds its port
// (a grandchild when wrapped).
type listenerProcess struct {
	*Process
	listenerPid int
}

// startListener starts this binary as a listener on port, ready once the
// port answers with this start's token.
func startListener(ctx context.Context, port int, wrapped bool) (*listenerProcess, error) {
	token := rand.Text()
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0])
		if wrapped {
			// dash forks the listener and waits for it, as a version
			// manager's shim around node or java might.
			cmd = exec.Command("/bin/sh", "-c", `"$0" & wait`, os.Args[0])
		}
		cmd.Env = append(os.Environ(), roleEnv+"=listener", portEnv+"="+strconv.Itoa(port), tokenEnv+"="+token)
		return cmd
	}
	lp := &listenerProcess{}
	var err error
	lp.Process, err = Start(ctx, "listener", newCmd, 30*time.Second, func(context.Context) bool {
		got, pid, err := ask(port)
		if err != nil || got != token {
			return false
		}
		lp.listenerPid = pid
		return true
	}, nil)
	return lp, err
}

// ask reads the token and pid of the listener on port.
func ask(port int) (string, int, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", 0, err
	}
	token, pid, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, err := strconv.Atoi(pid)
	return token, n, err
}

// gone reports whether process pid has ended (a zombie has: an init that
// reaps nothing may keep it).
func gone(pid int) bool {
	st, err := procStat(pid)
	return err != nil || st.ended()
}

// portFree reports whether nothing answers on port.
func portFree(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// orphan is a process the test did not start (a grandchild) and waits to
// see end.
type orphan struct {
	pid  int
	exit exitWatch
}

// killedParent runs a parent in role that starts a listener on port,
// SIGKILLs it once the listener answers, and returns its child and the
// listener, watched from before the kill.
func killedParent(t *testing.T, role string, port int, wrapped bool) (child, listener orphan) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role, portEnv+"="+strconv.Itoa(port), wrapEnv+"="+strconv.FormatBool(wrapped))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fscan(stdout, &child.pid, &listener.pid); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the parent reported no pids: %v (%v)", err, cmd.Wait())
	}
	// Watched while their parent, blocked on stdin, keeps them alive: the
	// pids cannot have been reused yet.
	child.exit, listener.exit = watchExit(t, child.pid), watchExit(t, listener.pid)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the parent ended with %v, want killed by SIGKILL", err)
	}
	return child, listener
}

// ended waits (10 s at most) for o to exit, then checks that port, which
// it held, is free: its sockets are closed before it counts as exited.
func (o orphan) ended(t *testing.T, port int, what string) {
	t.Helper()
	o.exit.wait(t, 10*time.Second, what)
	if !portFree(port) {
		t.Fatalf("%s: process %d ended but port %d still answers", what, o.pid, port)
	}
}

// sysPidfdOpen is pidfd_open(2)'s number (434 on every architecture but
// alpha), which the frozen syscall package does not name.
const sysPidfdOpen = 434

// exitWatch is a pidfd, or -1 for a process that had already ended. A
// pidfd is how to wait for a process this one did not start (a grandchild,
// an orphan, which Wait cannot reap): it becomes readable once the process
// has exited, zombie or reaped, and keeps naming it if its pid is reused.
type exitWatch int

// watchExit opens an exitWatch on pid, closed when the test ends.
func watchExit(t *testing.T, pid int) exitWatch {
	t.Helper()
	fd, _, e := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if e == syscall.ESRCH {
		return -1
	}
	if e != 0 {
		t.Fatalf("pidfd_open(%d): %v", pid, e)
	}
	t.Cleanup(func() { _ = syscall.Close(int(fd)) })
	return exitWatch(fd)
}

// wait blocks until the watched process has exited, failing the test
// after limit.
func (w exitWatch) wait(t *testing.T, limit time.Duration, what string) {
	t.Helper()
	if w < 0 {
		return
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(ep)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(w)}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, int(w), &ev); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s: not within %s", what, limit)
		}
		n, err := syscall.EpollWait(ep, []syscall.EpollEvent{ev}, int(left.Milliseconds())+1)
		switch {
		case err == syscall.EINTR: // the runtime's signals; wait on
		case err != nil:
			t.Fatal(err)
		case n > 0:
			return
		}
	}
}

// restart starts a listener on port again in this process, checks that
// it is the one that answers, and that Stop frees the port.
func restart(t *testing.T, port int, wrapped bool) {
	t.Helper()
	p, err := startListener(context.Background(), port, wrapped)
	if err != nil {
		t.Fatalf("starting again on port %d: %v", port, err)
	}
	listener := orphan{p.listenerPid, watchExit(t, p.listenerPid)} // a grandchild when wrapped
	p.Stop()
	listener.ended(t, port, "the listener after Stop")
	if !gone(p.listenerPid) {
		t.Fatalf("listener %d still runs after Stop", p.listenerPid)
	}
}

// A stand-in whose parent is SIGKILLed dies with it (Pdeathsig): its
// process ends and its port is free, with nothing else to kill it; it
// can be started again on the same port.
func TestChildDiesWithParent(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	child, listener := killedParent(t, "parent", port, false)
	if child.pid != listener.pid {
		t.Fatalf("the listener %d is not the child %d", listener.pid, child.pid)
	}
	child.ended(t, port, "the orphaned child")
	restart(t, port, false)
}

// A stand-in started through a wrapper that forks it (the real server is
// a grandchild, beyond Pdeathsig's reach): once the parent is SIGKILLed,
// the wrapper dies, and the next start finds the dead run's record and
// kills the grandchild that still holds the port, then starts its own
// there. Stop ends the whole group of a wrapped stand-in too.
func TestStartEndsWhatADeadRunLeft(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	wrapper, listener := killedParent(t, "parent", port, true)
	if wrapper.pid == listener.pid {
		t.Fatalf("the listener %d is not the wrapper's child", listener.pid)
	}
	wrapper.exit.wait(t, 10*time.Second, "the wrapper gone")
	restart(t, port, true)
	if !gone(listener.pid) {
		t.Fatalf("the dead run's listener %d still runs", listener.pid)
	}
}

// When a wrapper child exits (killed alone here), what it started in its
// group is killed too, so a restart finds the port free.
func TestGroupEndsWithChild(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := startListener(context.Background(), port, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	listener := orphan{p.listenerPid, watchExit(t, p.listenerPid)}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	listener.ended(t, port, "the wrapper's listener")
}

// A sweep leaves the stand-ins of live runs alone: a record whose starter
// still runs is another run's (here this test's own).
func TestSweepSparesLiveRuns(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := startListener(context.Background(), port, true)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	dir, err := recordDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := sweep(dir); err != nil {
		t.Fatal(err)
	}
	if _, pid, err := ask(port); err != nil || pid != p.listenerPid {
		t.Fatalf("after a sweep the live listener answers %d, %v; want %d", pid, err, p.listenerPid)
	}
	if _, err := os.Stat(p.current().record); err != nil {
		t.Fatalf("a live child's record: %v", err)
	}
}

// A process that called EndWithParent ends when its parent is SIGKILLed,
// as the dev server does when the `go run` that started it is killed.
func TestEndWithParent(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	_, listener := killedParent(t, "plain-parent", port, false)
	listener.ended(t, port, "the orphan")
}
