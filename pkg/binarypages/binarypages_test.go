package binarypages

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

const exe = "/usr/bin/cluster-samples-operator"

// entry writes one mapping's smaps entry as the kernel does, with the fields Releasable reads
// among others it must skip.
func entry(rangeAndPerms, path string, rssKiB, anonymousKiB string) string {
	var b strings.Builder
	b.WriteString(rangeAndPerms + " 00000000 fd:00 1234")
	if path != "" {
		b.WriteString("                       " + path)
	}
	b.WriteString("\nSize:              16300 kB\nKernelPageSize:        4 kB\n")
	if rssKiB != "" {
		b.WriteString("Rss:               " + rssKiB + " kB\n")
	}
	b.WriteString("Pss:               " + rssKiB + " kB\nPrivate_Clean:         0 kB\n")
	if anonymousKiB != "" {
		b.WriteString("Anonymous:             " + anonymousKiB + " kB\n")
	}
	b.WriteString("AnonHugePages:         0 kB\nTHPeligible:    0\nVmFlags: rd ex mr mw me dw sd\n")
	return b.String()
}

func TestReleasableKeepsOnlyTheBinarysNeverWrittenReadOnlyMappings(t *testing.T) {
	smaps := entry("00400000-013eb000 r-xp", exe, "13208", "0") +
		entry("013eb000-0254e000 r--p", exe, "13964", "0") +
		// Written once (relocations), read-only since: the file no longer holds those bytes.
		entry("0254e000-02550000 r--p", exe, "8", "8") +
		entry("02550000-025d7000 rw-p", exe, "548", "140") +
		// Writable: a page not written yet may be written at any moment.
		entry("025d7000-025d8000 rw-p", exe, "4", "0") +
		entry("025d8000-04623000 rw-p", "", "148", "148") +
		entry("7f00aa000000-7f00aa100000 r-xp", "/usr/lib64/libc.so.6", "900", "0") +
		entry("7f00ab000000-7f00ab100000 r--p", exe+" (deleted)", "64", "0") +
		entry("7f00ac000000-7f00ac010000 r--s", exe, "64", "0") +
		// No Anonymous line: nothing says no page was written.
		entry("7f00ad000000-7f00ad010000 r--p", exe, "64", "") +
		entry("7ffc1d4c0000-7ffc1d4e1000 rw-p", "[stack]", "20", "20")
	got, err := Releasable(strings.NewReader(smaps), exe)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x400000, End: 0x13eb000, ResidentKiB: 13208},
		{Start: 0x13eb000, End: 0x254e000, ResidentKiB: 13964},
		{Start: 0x7f00ac000000, End: 0x7f00ac010000, ResidentKiB: 64},
	}
	if !slices.Equal(got, want) {
		t.Errorf("releasable:\n got %+v\nwant %+v", got, want)
	}
}

// wantFirstPageReleasable checks that of smaps, Releasable selects for exe only the page at
// 0x400000, with 4 KiB resident.
func wantFirstPageReleasable(t *testing.T, smaps, exe string) {
	t.Helper()
	got, err := Releasable(strings.NewReader(smaps), exe)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Mapping{{Start: 0x400000, End: 0x401000, ResidentKiB: 4}}; !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestReleasableReadsAPathWithSpaces(t *testing.T) {
	const spaced = "/opt/samples operator/bin"
	wantFirstPageReleasable(t, entry("00400000-00401000 r-xp", spaced, "4", "0")+entry("00401000-00402000 r-xp", "/opt/samples", "4", "0"), spaced)
}

// An anonymous mapping's header has no path: what follows it is its own, not the mapping's before.
func TestReleasableReadsAMappingWithoutAPathAsOneOfItsOwn(t *testing.T) {
	wantFirstPageReleasable(t, entry("00400000-00401000 r--p", exe, "4", "0")+entry("00401000-00500000 rw-p", "", "148", "148"), exe)
}

func TestReleasableWithoutAnExecutableReleasesNothing(t *testing.T) {
	got, err := Releasable(strings.NewReader(entry("00400000-013eb000 r-xp", "", "13208", "0")), "")
	if err != nil || len(got) != 0 {
		t.Errorf("got %+v, %v; want nothing", got, err)
	}
}

func TestReleasableRefusesWhatIsNotSmaps(t *testing.T) {
	for name, text := range map[string]string{
		"a field before any mapping":       "Rss:  4 kB\n",
		"a size in another unit":           entry("00400000-00401000 r-xp", exe, "4", "0") + "Anonymous: 4 MB\n",
		"a size that is no number":         entry("00400000-00401000 r-xp", exe, "four", "0"),
		"a negative size":                  entry("00400000-00401000 r-xp", exe, "4", "-4"),
		"a range whose start is no number": "zz400000-00401000 r-xp 00000000 fd:00 1234 " + exe + "\nRss: 4 kB\n",
		"a range whose end is no number":   "00400000-zz401000 r-xp 00000000 fd:00 1234 " + exe + "\nRss: 4 kB\n",
	} {
		if got, err := Releasable(strings.NewReader(text), exe); err == nil {
			t.Errorf("%s: got %+v and no error", name, got)
		}
	}
	// A range that ends where or before it starts is no mapping header.
	for _, r := range []string{"00401000-00400000", "00400000-00400000"} {
		if _, err := Releasable(strings.NewReader(r+" r-xp 0 fd:00 1 "+exe+"\nRss: 4 kB\n"), exe); err == nil {
			t.Errorf("%s was read as a mapping", r)
		}
	}
}

// releasableNow returns this process's mappings of its own binary that Releasable selects.
func releasableNow(t *testing.T) []Mapping {
	t.Helper()
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe:", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	mappings, err := Releasable(f, self)
	if err != nil {
		t.Fatal(err)
	}
	return mappings
}

func residentKiB(mappings []Mapping) (kib uint64) {
	for _, m := range mappings {
		kib += m.ResidentKiB
	}
	return kib
}

// mapEveryPage makes every page of the mappings resident, whatever the kernel's fault-around
// and read-ahead, by reading them through /proc/self/mem, which faults them into this process.
func mapEveryPage(t *testing.T, mappings []Mapping) {
	t.Helper()
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Skip("no /proc/self/mem:", err)
	}
	defer mem.Close()
	buf := make([]byte, 1<<20)
	for _, m := range mappings {
		for at := m.Start; at < m.End; at += uint64(len(buf)) {
			n := min(uint64(len(buf)), m.End-at)
			if _, err := mem.ReadAt(buf[:n], int64(at)); err != nil {
				t.Fatalf("reading %x-%x: %v", at, at+n, err)
			}
		}
	}
}

func TestReleaseDropsTheBinarysPagesAndWhatIsReadAgainIsUnchanged(t *testing.T) {
	mapEveryPage(t, releasableNow(t))
	resident := releasableNow(t)
	before := residentKiB(resident)
	if before < 1024 {
		t.Fatalf("the test binary has %d KiB of read-only pages; want at least 1 MiB to see them go", before)
	}
	released, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	// What Release says it released is what all of the mappings it dropped held: more than any
	// one of them once two hold pages, never more than they map.
	var mappedKiB, largestKiB uint64
	for _, m := range resident {
		mappedKiB += (m.End - m.Start) / 1024
		largestKiB = max(largestKiB, m.ResidentKiB)
	}
	if released > mappedKiB || (len(resident) > 1 && released <= largestKiB) {
		t.Errorf("released %d KiB of %d mappings that map %d KiB, the largest resident one %d KiB", released, len(resident), mappedKiB, largestKiB)
	}
	after := residentKiB(releasableNow(t))
	t.Logf("resident read-only pages of the test binary: %d KiB before, %d KiB released, %d KiB after", before, released, after)
	if released < before/2 {
		t.Errorf("released %d KiB of the %d KiB resident", released, before)
	}
	// What the test ran since the release (reading smaps) came back, with the 64 KiB around
	// each page it read: a good half of this small binary, not all of it.
	if after > before*3/4 {
		t.Errorf("%d KiB resident after the release, %d KiB before", after, before)
	}
	// Code and read-only data read again are the binary's own: encoding reads both.
	out, err := json.Marshal(map[string][]int{"pages": {4, 16, 64}})
	if err != nil || string(out) != `{"pages":[4,16,64]}` {
		t.Errorf("after the release: %s, %v", out, err)
	}
}
