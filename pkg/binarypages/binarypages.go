// Package binarypages gives back the pages of the operator's own binary that only its package
// initialisers read.
//
// Linux maps a file's pages into a process 64 KiB around each page the process touches
// (fault-around), from a page cache that read-ahead has filled with the whole binary. The package
// initialisers run once, in every corner of the binary (each Kubernetes and OpenShift API group
// registers its types in a scheme), so they leave about 5 MiB of the binary mapped that nothing
// reads again, and those count in the operator's resident memory for as long as it runs.
// Dropping the read-only mappings once the initialisers are done keeps only what the operator
// reads afterwards: a page read again comes back from the page cache, unchanged, at the cost of
// a minor fault.
package binarypages

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Mapping is an address range [Start, End) of the binary that may be dropped.
type Mapping struct {
	Start, End uint64
	// ResidentKiB is what the range had resident when it was read (smaps' Rss).
	ResidentKiB uint64
}

// Releasable returns the mappings of the file exe, in smaps (the text of /proc/<pid>/smaps),
// whose pages read back from the file are exactly what the process had: mappings that cannot be
// written and of which no page was ever written. A private page once written (the relocations
// of a dynamically linked binary, made read-only afterwards) is an anonymous copy that the file
// no longer holds, so a mapping with any anonymous page, or whose smaps entry does not say, is
// left alone.
func Releasable(smaps io.Reader, exe string) ([]Mapping, error) {
	type entry struct {
		mapping   Mapping
		candidate bool
		// neverWritten is smaps saying the mapping has no anonymous page.
		neverWritten bool
	}
	var entries []entry
	s := bufio.NewScanner(smaps)
	for s.Scan() {
		line := s.Text()
		if header, ok := parseHeader(line); ok {
			entries = append(entries, entry{
				mapping:   Mapping{Start: header.start, End: header.end},
				candidate: !strings.Contains(header.perms, "w") && header.path == exe && exe != "",
			})
			continue
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("smaps: %q before the first mapping", line)
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || (key != "Rss" && key != "Anonymous") {
			continue
		}
		kib, err := parseKiB(value)
		if err != nil {
			return nil, fmt.Errorf("smaps: %s: %w", line, err)
		}
		last := &entries[len(entries)-1]
		if key == "Rss" {
			last.mapping.ResidentKiB = kib
		} else {
			last.neverWritten = kib == 0
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	var releasable []Mapping
	for _, e := range entries {
		if e.candidate && e.neverWritten {
			releasable = append(releasable, e.mapping)
		}
	}
	return releasable, nil
}

// Release drops the calling process's read-only mappings of its own binary, as Releasable
// selects them, and returns how many KiB were resident in them.
func Release() (uint64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	mappings, err := Releasable(f, exe)
	if err != nil {
		return 0, err
	}
	var released uint64
	for _, m := range mappings {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.Start), uintptr(m.End-m.Start), unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %x-%x: %w", m.Start, m.End, errno)
		}
		released += m.ResidentKiB
	}
	return released, nil
}

type header struct {
	start, end uint64
	perms      string
	path       string
}

// parseHeader reads the first line of a mapping's smaps entry:
// "start-end perms offset dev inode [path]", the path possibly with spaces.
func parseHeader(line string) (header, bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return header{}, false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	if !ok {
		return header{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return header{}, false
	}
	h := header{start: start, end: end, perms: fields[1]}
	// The path is what follows the inode, spaces included.
	rest := line
	for range 5 {
		rest = strings.TrimLeft(rest, " \t")
		rest = rest[strings.IndexAny(rest+" ", " \t"):]
	}
	h.path = strings.TrimSpace(rest)
	return h, true
}

func parseKiB(value string) (uint64, error) {
	number, unit, _ := strings.Cut(strings.TrimSpace(value), " ")
	if unit != "kB" {
		return 0, fmt.Errorf("unit %q, want kB", unit)
	}
	return strconv.ParseUint(number, 10, 64)
}
