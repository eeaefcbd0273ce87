//go:build heapprofile

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// A binary built with -tags heapprofile writes a heap profile and a goroutine profile every
// second into $HEAP_PROFILE_DIR, for finding what the operator's memory holds; shipped binaries have none.
// The sampling rate is raised here, after every other package has initialised; to see what those
// initialisers keep, set it from the start with GODEBUG=memprofilerate=N, which this leaves alone.
func init() {
	dir := os.Getenv("HEAP_PROFILE_DIR")
	if dir == "" {
		return
	}
	if runtime.MemProfileRate == 512*1024 { // the runtime's default: no GODEBUG setting
		runtime.MemProfileRate = 4096
	}
	go func() {
		for i := 0; ; i++ {
			time.Sleep(time.Second)
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d-%03d.pb.gz", os.Getpid(), i)))
			if err != nil {
				continue
			}
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
			if g, err := os.Create(filepath.Join(dir, fmt.Sprintf("goroutines-%d-%03d.txt", os.Getpid(), i))); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(g, 1)
				g.Close()
			}
		}
	}()
}
