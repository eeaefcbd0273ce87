package mirrorcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

// ErrNotFound is what a Lookup wraps when the registry answers that it does not hold the image.
var ErrNotFound = errors.New("not found")

// Lookup asks the registry of ref whether it holds ref: nil when it does, an error wrapping
// ErrNotFound when it says it does not, any other error when it cannot tell (refused credentials,
// a registry that does not answer).
type Lookup func(ctx context.Context, ref string) error

// Target maps an image of the inventory to the references on the mirror the cluster will import
// it from, in the order it tries them; none when no mirror serves it.
type Target func(image string) []string

// SamplesRegistry is the Target of a samplesRegistry value: the operator rewrites each image's
// registry (rewrite is inventory.RewriteRegistry with the inventory's source registries) and the
// cluster imports from there alone.
func SamplesRegistry(rewrite func(image string) string) Target {
	return func(image string) []string { return []string{rewrite(image)} }
}

// MirrorSets is the Target of mirror sets: the mirrors the server tries before the image's own
// registry (mirrorsets.Resolver), which a disconnected cluster cannot reach and which is not
// checked.
func MirrorSets(s mirrorsets.Sets) Target {
	r := mirrorsets.NewResolver(s)
	return func(image string) []string { return r.Resolve(image).Mirrors }
}

// Status is what the check found for one image.
type Status string

const (
	Present Status = "present"
	Missing Status = "missing"
	// NoMirror: no mirror set covers the image; the cluster would pull it from its own registry.
	NoMirror Status = "no-mirror"
	// Error: a mirror could not say (and none had the image).
	Error Status = "error"
)

// Row is the result for one image.
type Row struct {
	Image string `json:"image"`
	// Mirror is where the image was found or, when it was not, the first place looked.
	Mirror string `json:"mirror,omitempty"`
	// Tried lists every place looked, in order, when there were several.
	Tried  []string `json:"tried,omitempty"`
	Status Status   `json:"status"`
	Reason string   `json:"reason,omitempty"`
}

// Summary counts the rows by status.
type Summary struct {
	Images   int `json:"images"`
	Present  int `json:"present"`
	Missing  int `json:"missing"`
	NoMirror int `json:"noMirror"`
	Errors   int `json:"errors"`
}

// OK: every image is present.
func (s Summary) OK() bool { return s.Present == s.Images }

// Report is the result of Check.
type Report struct {
	Rows    []Row   `json:"images"`
	Summary Summary `json:"summary"`
}

// Check looks up every image where target maps it, with at most parallel lookups at a time, and
// returns a row per image in the order of images. An image is present when any place it maps to
// holds it; missing when every place answers that it does not.
func Check(ctx context.Context, images []string, target Target, lookup Lookup, parallel int) Report {
	rows := make([]Row, len(images))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, image := range images {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rows[i] = checkOne(ctx, image, target(image), lookup)
		})
	}
	wg.Wait()
	r := Report{Rows: rows, Summary: Summary{Images: len(rows)}}
	for _, row := range rows {
		switch row.Status {
		case Present:
			r.Summary.Present++
		case Missing:
			r.Summary.Missing++
		case NoMirror:
			r.Summary.NoMirror++
		default:
			r.Summary.Errors++
		}
	}
	return r
}

func checkOne(ctx context.Context, image string, places []string, lookup Lookup) Row {
	row := Row{Image: image}
	if len(places) == 0 {
		row.Status, row.Reason = NoMirror, "no mirror set covers this image"
		return row
	}
	row.Mirror = places[0]
	if len(places) > 1 {
		row.Tried = places
	}
	var failures []string
	for _, place := range places {
		err := lookup(ctx, place)
		if err == nil {
			row.Mirror, row.Status, row.Reason = place, Present, ""
			return row
		}
		if !errors.Is(err, ErrNotFound) {
			row.Status = Error
		}
		if len(places) > 1 {
			failures = append(failures, place+": "+err.Error())
		} else {
			failures = append(failures, err.Error())
		}
	}
	if row.Status == "" {
		row.Status = Missing
	}
	row.Reason = strings.Join(failures, "; ")
	return row
}

// WriteTable writes one aligned row per image (IMAGE, MIRROR, STATUS, REASON) and a summary line.
func (r Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tMIRROR\tSTATUS\tREASON")
	for _, row := range r.Rows {
		mirror := row.Mirror
		if mirror == "" {
			mirror = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.Image, mirror, row.Status, row.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A row without a reason would end in the padding of its status.
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		out.WriteString(strings.TrimRight(l, " ") + "\n")
	}
	out.WriteString(r.Summary.String() + "\n")
	_, err := io.WriteString(w, out.String())
	return err
}

// String is the summary line: "251 images: 250 present, 1 missing".
func (s Summary) String() string {
	parts := []string{fmt.Sprintf("%d present", s.Present), fmt.Sprintf("%d missing", s.Missing)}
	if s.NoMirror > 0 {
		parts = append(parts, fmt.Sprintf("%d without a mirror", s.NoMirror))
	}
	if s.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d not checked (errors)", s.Errors))
	}
	return fmt.Sprintf("%d images: %s", s.Images, strings.Join(parts, ", "))
}

// WriteJSON writes the report as one indented JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
