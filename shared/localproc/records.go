package localproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acme/codescan-api/shared/reporoot"
)

// A record (a file in .local/run) names one running child and the process
// that started it, each by pid and start time, since a pid alone is
// reused. Pdeathsig kills the child of a run that was SIGKILLed, but what
// a wrapper child started (the real server, holding the port) lives on;
// the next start finds the record, sees its starter gone, and kills what
// is left of the child's process group. Records of live runs (another
// withddb, another test binary) are left alone.
type record struct {
	Name   string `json:"name"`
	Parent proc   `json:"parent"`
	Child  proc   `json:"child"` // its pid is also its process group's id
}

// proc names one process for good.
type proc struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot, /proc/<pid>/stat
}

// recordDir is where records are kept: .local/run of the repository.
func recordDir() (string, error) {
	root, err := reporoot.Find()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".local", "run")
	return dir, os.MkdirAll(dir, 0o755)
}

// writeRecord records child pid of this process, named name, in dir and
// returns the record's path.
func writeRecord(dir, name string, pid int) (string, error) {
	if dir == "" {
		return "", nil
	}
	self, err := procStat(os.Getpid())
	if err != nil {
		return "", err
	}
	child, err := procStat(pid)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(record{Name: name,
		Parent: proc{Pid: os.Getpid(), Start: self.start}, Child: proc{Pid: pid, Start: child.start}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%d.json", os.Getpid(), pid))
	// Written aside and renamed: a sweep never reads half a record.
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(path+".tmp", path)
}

func removeRecord(path string) {
	if path != "" {
		_ = os.Remove(path)
	}
}

// sweep stops what the records in dir name of runs that are gone, and
// removes those records.
func sweep(dir string) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range paths {
		errs = append(errs, sweepRecord(path))
	}
	return errors.Join(errs...)
}

func sweepRecord(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // swept meanwhile by another start
	}
	var r record
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil { // names nothing that could be checked
		return os.Remove(path)
	}
	if r.Parent.running() {
		return nil
	}
	if err := r.Child.killGroup(); err != nil {
		return fmt.Errorf("%s left running by an earlier run (process group %d): %w", r.Name, r.Child.Pid, err)
	}
	if err := os.Remove(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// running reports whether the process still runs (a zombie has ended).
func (p proc) running() bool {
	st, err := procStat(p.Pid)
	return err == nil && st.start == p.Start && !st.ended()
}

// killGroup kills what runs of the group p led, and waits until it is
// gone. The group's id is p's pid, and the kernel gives no new process a
// pid that is still some group's id: processes found in that group are
// p's leftovers, unless the pid now names a later process (another start
// time), which means p's group had emptied.
func (p proc) killGroup() error {
	if st, err := procStat(p.Pid); err == nil && st.start != p.Start {
		return nil
	}
	if len(groupMembers(p.Pid)) == 0 {
		return nil
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(groupMembers(p.Pid)) > 0 {
		if time.Now().After(deadline) {
			return errors.New("still running 10 s after SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// groupMembers lists the processes of group pgid that have not ended.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procStat(pid); err == nil && st.pgid == pgid && !st.ended() {
			out = append(out, pid)
		}
	}
	return out
}

// procInfo is what localproc reads of /proc/<pid>/stat.
type procInfo struct {
	state byte
	pgid  int
	start uint64
}

// ended reports a process that has exited but was not reaped (its parent
// may be an init that reaps nothing).
func (i procInfo) ended() bool { return i.state == 'Z' || i.state == 'X' }

// procStat reads /proc/<pid>/stat (proc(5)). The command name, field 2,
// may hold spaces and parentheses: fields are counted after its last ')'.
func procStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	field := func(n int) string { return f[n-3] } // f[0] is field 3, the state
	pgid, err := strconv.Atoi(field(5))
	if err != nil {
		return procInfo{}, err
	}
	start, err := strconv.ParseUint(field(22), 10, 64)
	if err != nil {
		return procInfo{}, err
	}
	return procInfo{state: field(3)[0], pgid: pgid, start: start}, nil
}
