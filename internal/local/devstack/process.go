package devstack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a process started in its own process group, reaped by one
// goroutine.
type child struct {
	cmd  *exec.Cmd
	tail *tailBuffer
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // Wait's error, valid after done

	stopOnce sync.Once
	stopErr  error
}

// startChild starts cmd in a new process group, to be killed by the kernel
// if this process dies first (Linux). Its stderr (and stdout, when
// cmd.Stdout is nil) is copied to the given writers and to a tail kept for
// error messages; a stdout that is an *os.File is the child's own.
func startChild(cmd *exec.Cmd, stdout, stderr io.Writer) (*child, error) {
	c := &child{cmd: cmd, tail: &tailBuffer{max: 4096}, done: make(chan struct{})}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	if f, ok := stdout.(*os.File); ok && cmd.Stdout == nil {
		cmd.Stdout = f
	}
	if cmd.Stdout == nil {
		cmd.Stdout = io.MultiWriter(orDiscard(stdout), c.tail)
	}
	cmd.Stderr = io.MultiWriter(orDiscard(stderr), c.tail)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// exitError describes how the child ended, with the tail of its output.
func (c *child) exitError(what string) error {
	out := strings.TrimSpace(c.tail.String())
	if out != "" {
		out = ":\n" + out
	}
	return fmt.Errorf("%s exited (%v)%s", what, c.err, out)
}

// stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits until the leader is reaped. Other groups listed in extra (processes
// the child put in groups of their own) are killed with SIGKILL at once.
// It is idempotent.
func (c *child) stop(grace time.Duration, extra ...int) error {
	c.stopOnce.Do(func() {
		pgid := c.pid()
		if !c.exited() {
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
		}
		for _, g := range extra {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		select {
		case <-c.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				c.stopErr = fmt.Errorf("process %d did not exit after SIGKILL", pgid)
				return
			}
		}
		// The leader is gone; anything left in its group is killed too.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
	return c.stopErr
}

// childGroups returns the process groups of pid's children that are not in
// pid's own group. It reads /proc and returns nil where there is none.
func childGroups(pid int) []int {
	var groups []int
	for _, p := range childPIDs(pid) {
		if g, err := syscall.Getpgid(p); err == nil && g != pid && g == p {
			groups = append(groups, g)
		}
	}
	return groups
}

// childPIDs lists the children of pid from /proc (Linux); elsewhere nil.
func childPIDs(pid int) []int { return procTree()[pid] }

// Descendants returns every process below pid, children first, read from
// /proc (Linux); elsewhere nil.
func Descendants(pid int) []int {
	tree := procTree()
	var out []int
	for next := []int{pid}; len(next) > 0; next = next[1:] {
		out = append(out, tree[next[0]]...)
		next = append(next, tree[next[0]]...)
	}
	return out
}

// procTree maps each parent process ID to its children, read from /proc.
func procTree() map[int][]int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	kids := map[int][]int{}
	for _, f := range stats {
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		b, err := os.ReadFile(f)
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		p, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		pp, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			kids[pp] = append(kids[pp], p)
		}
	}
	return kids
}

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the user + system CPU time of every thread of pid,
// living or exited, from /proc/<pid>/stat (Linux).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ... utime stime: fields 14 and 15, 12 and 13
	// after the comm.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no comm", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// MachineCPU returns the CPU time every CPU of the machine has spent busy
// since boot (Linux, /proc/stat: user, nice, system, irq, softirq and
// steal; not idle or iowait): every process's and the kernel's own
// threads', which on a machine with nothing else running is what a load
// costs in all.
func MachineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: first line %q", line)
	}
	var busy int64
	// cpu user nice system idle iowait irq softirq steal ...
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += n
	}
	return time.Duration(busy) * clockTick, nil
}

// ProcessAlive reports whether pid is a live process: it exists and is not
// a zombie waiting for a parent that does not reap it.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// Gone, unless there is no /proc to ask (not Linux).
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	return b[i+2] != 'Z'
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
