//go:build cpuprofile

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// A binary built with -tags cpuprofile writes a CPU profile of each 20 s into $CPU_PROFILE_DIR,
// for finding where the operator's CPU goes in a phase of `make bench`; shipped binaries have none.
func init() {
	dir := os.Getenv("CPU_PROFILE_DIR")
	if dir == "" {
		return
	}
	go func() {
		for i := 0; ; i++ {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d-%03d.pb.gz", os.Getpid(), i)))
			if err != nil {
				return
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return
			}
			time.Sleep(20 * time.Second)
			pprof.StopCPUProfile()
			f.Close()
		}
	}()
}
