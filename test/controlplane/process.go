package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// process is one child of the control plane. It runs in its own process group so that a
// stop reaches everything it forked, and with a parent-death signal so that it cannot outlive
// a test binary that crashes or is killed.
type process struct {
	name    string
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{}
	waitErr error
}

func startProcess(name, logPath, binary string, args ...string) (*process, error) {
	return startProcessEnv(name, logPath, binary, nil, args...)
}

// startProcessEnv is startProcess with the environment env (nil: this process's).
func startProcessEnv(name, logPath, binary string, env []string, args ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(env, serverGCEnv...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// serverGCEnv is the garbage collector setting of every server the control plane starts (all
// are Go programs). A test's servers live for a minute or two and hold a small heap, yet with
// the default GOGC a fifth of kube-apiserver's start-up CPU went to collecting it (measured with
// perf: 2.3 s of CPU per start, 1.7 s without collection), and the tests share two cores between
// several control planes, the operator and the race detector. Collection waits until the heap
// reaches the limit instead: a few hundred MiB per server, which the machines the tests run on
// have many times over.
var serverGCEnv = []string{"GOGC=off", "GOMEMLIMIT=512MiB"}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process group to terminate and kills it when it does not within the grace period.
func (p *process) stop(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// kill sends SIGKILL to the process group at once, as a crash would.
func (p *process) kill() {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// FreePort returns a loopback port nothing listens on, chosen below (or above) the kernel's
// ephemeral range. A port from that range, which is what listening on port 0 hands out, can be
// taken as the source port of any outgoing connection between the moment it is chosen and the
// moment the server binds it, and parallel tests open thousands of connections (a token flood,
// an image mirror). Ports outside it are only ever taken by another listener.
func FreePort() (int, error) {
	lo, hi := serverPortRange()
	for range 200 {
		port := lo + rand.IntN(hi-lo+1)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free loopback port in %d-%d after 200 tries", lo, hi)
}

// serverPortRange is the widest span of unprivileged ports outside the ephemeral range
// (net.ipv4.ip_local_port_range, 32768-60999 by default).
func serverPortRange() (int, int) {
	ephemeralLo, ephemeralHi := 32768, 60999
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo, hi int
		if n, _ := fmt.Sscan(string(data), &lo, &hi); n == 2 && lo <= hi {
			ephemeralLo, ephemeralHi = lo, hi
		}
	}
	const lowest, highest = 10000, 65535
	below, above := ephemeralLo-1-lowest, highest-(ephemeralHi+1)
	switch {
	case below >= above && below > 1000:
		return lowest, ephemeralLo - 1
	case above > 1000:
		return ephemeralHi + 1, highest
	default:
		// The ephemeral range covers nearly everything: no port is safe from it, so any will do.
		return lowest, highest
	}
}

// portTakenSince reports whether the log at path, from byte offset on, says a listen failed
// because the address was in use.
func portTakenSince(path string, offset int64) bool {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return false
	}
	return bytes.Contains(data[offset:], []byte("address already in use"))
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// ProcessAlive reports whether a process with this PID still exists (zombies excluded).
func ProcessAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return !errors.Is(err, syscall.ESRCH)
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Field 3 of /proc/PID/stat is the state; Z is a zombie that only waits to be reaped.
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return stat[i+2] != 'Z'
		}
	}
	return true
}
