package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// MemorySample is one reading of /proc/PID/status, in KiB.
type MemorySample struct {
	Seconds float64 `json:"seconds"` // since the operator process started
	RSS     int64   `json:"rssKiB"`
	Anon    int64   `json:"anonKiB"`
	File    int64   `json:"fileKiB"`
}

// memorySampler reads the operator's /proc status often enough to catch what its peak is made
// of: VmHWM says how high RSS went, not whether the binary's pages or the Go heap took it there.
type memorySampler struct {
	pid     int
	started time.Time
	stop    chan struct{}
	done    chan struct{}

	mu   sync.Mutex
	peak MemorySample
}

// samplePeriod is short next to the initial sync (about a second at 1x), where the peak is.
const samplePeriod = 20 * time.Millisecond

func startMemorySampler(pid int, started time.Time) *memorySampler {
	s := &memorySampler{pid: pid, started: started, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(samplePeriod)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *memorySampler) sample() {
	st := procStatus(s.pid)
	if st["VmRSS"] == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st["VmRSS"] > s.peak.RSS {
		s.peak = MemorySample{Seconds: time.Since(s.started).Seconds(), RSS: st["VmRSS"], Anon: st["RssAnon"], File: st["RssFile"]}
	}
}

// Peak is the sample with the highest VmRSS so far.
func (s *memorySampler) Peak() MemorySample {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

func (s *memorySampler) Stop() {
	close(s.stop)
	<-s.done
}

// Mapping kinds of smapsBreakdown.
const (
	mapBinaryCode = "binary r-x (.text)"
	mapBinaryRO   = "binary r-- (.rodata, .gopclntab)"
	mapBinaryData = "binary rw- (.data, .bss)"
	mapAnon       = "anonymous (Go heap, stacks, runtime)"
	mapOther      = "other files"
)

// smapsBreakdown sums Rss of the process's mappings by kind, in KiB: which part of the
// binary's file-backed pages are resident, and how much is anonymous memory.
func smapsBreakdown(pid int, binary string) map[string]int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil
	}
	defer f.Close()
	binary, _ = filepath.EvalSymlinks(binary)
	out := map[string]int64{}
	kind := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header line
			kind = mappingKind(fields, binary)
			continue
		}
		if fields[0] == "Rss:" && len(fields) >= 2 {
			if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				out[kind] += n
			}
		}
	}
	return out
}

// mappingKind classifies one smaps header: "addr perms offset dev inode [path]".
func mappingKind(fields []string, binary string) string {
	path := ""
	if len(fields) >= 6 {
		path = fields[5]
	}
	perms := ""
	if len(fields) >= 2 {
		perms = fields[1]
	}
	switch {
	case path == binary && strings.HasPrefix(perms, "r-x"):
		return mapBinaryCode
	case path == binary && strings.HasPrefix(perms, "rw"):
		return mapBinaryData
	case path == binary:
		return mapBinaryRO
	case path == "" || strings.HasPrefix(path, "["):
		return mapAnon
	}
	return mapOther
}

// dropPageCache makes the kernel forget the cached pages of the operator's binary, so that every
// run maps them the same way: read on demand as the process touches them. Otherwise the bench's
// own sequential read of the file (its SHA-256) would leave large folios in the page cache, and a
// fault on any byte of one maps all of it: the binary's resident size would then depend on how
// the file was last read rather than on what the operator runs.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Dirty pages are not dropped: write them first (a binary just built may still be dirty).
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// runtimeEnvNames are the Go runtime settings the Deployment gives the operator; the bench runs
// the operator with the same values, so that it measures what ships.
var runtimeEnvNames = []string{"GOGC", "GOMEMLIMIT"}

// deploymentRuntimeEnv returns the runtimeEnvNames variables of the operator container in the
// Deployment manifest at path, as NAME=value.
func deploymentRuntimeEnv(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var env []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "cluster-samples-operator" {
			continue
		}
		for _, e := range c.Env {
			for _, name := range runtimeEnvNames {
				if e.Name == name {
					env = append(env, e.Name+"="+e.Value)
				}
			}
		}
	}
	return env, nil
}
