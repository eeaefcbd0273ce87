package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// request is one API request from the kube-apiserver's audit log, counted once however many
// stages the log records for it. A watch is logged when its response starts and again when it
// ends; it is placed at the time it was received, so an open watch counts once, when it opened.
type request struct {
	Verb        string
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	// FirstCode is the code of the first stage logged and FirstStageAt when it was logged: for a
	// watch, its answer when its response began (its Code becomes a Panic's 500 when
	// openshift-apiserver stops under it, however long it ran).
	FirstCode    int
	FirstStageAt time.Time
	UserAgent    string
	Received     time.Time
}

// auditLog reads the requests one user made from the API server's audit log, incrementally:
// each refresh parses only what was appended since the last one. The control plane's own
// AuditEvents keeps only completed requests, which leaves out watches that are still open; the
// bench needs those too, so it reads the log itself, decoding lines with controlplane.ParseAuditLine.
type auditLog struct {
	path, user string
	offset     int64
	byID       map[string]int
	reqs       []request
}

func newAuditLog(path, user string) *auditLog {
	return &auditLog{path: path, user: user, byID: map[string]int{}}
}

// refresh reads the complete lines appended since the last call and returns every request so
// far, in log order.
func (a *auditLog) refresh() ([]request, error) {
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a partial last line is read again next time
		}
		if err != nil {
			return a.reqs, err
		}
		a.offset += int64(len(line))
		a.add(line)
	}
	return a.reqs, nil
}

func (a *auditLog) add(line []byte) {
	id, r, ok := parseAuditLine(line, a.user)
	if !ok {
		return
	}
	if i, seen := a.byID[id]; seen && id != "" {
		if r.Code != 0 {
			a.reqs[i].Code = r.Code // the later stage has the final code
		}
		return
	}
	a.byID[id] = len(a.reqs)
	a.reqs = append(a.reqs, r)
}

// parseAuditLine decodes one audit event of user (of anyone for ""); ok is false for other
// users and bad lines.
func parseAuditLine(line []byte, user string) (auditID string, r request, ok bool) {
	e, ok := controlplane.ParseAuditLine(line)
	if !ok || (user != "" && e.User != user) {
		return "", r, false
	}
	return e.ID, request{
		Verb: e.Verb, Group: e.Group, Resource: e.Resource, Subresource: e.Subresource,
		Namespace: e.Namespace, Name: e.Name, Code: e.Code, UserAgent: e.UserAgent, Received: e.Received,
		FirstCode: e.Code, FirstStageAt: e.Time,
	}, true
}

// between returns the requests received in [from, to).
func between(reqs []request, from, to time.Time) []request {
	var out []request
	for _, r := range reqs {
		if !r.Received.Before(from) && r.Received.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// isWrite: the request changes what the server stores. A review (SelfSubjectAccessReview,
// TokenReview ...) is a create that stores nothing: a question, counted with the reads.
func (r request) isWrite() bool {
	switch r.Verb {
	case "create":
		return !strings.HasSuffix(r.Resource, "reviews")
	case "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// key names the request's verb and resource, with the subresource: "update configs/status".
func (r request) key() string {
	k := r.Verb + " " + r.Resource
	if r.Subresource != "" {
		k += "/" + r.Subresource
	}
	return k
}

// cachedResources are the kinds the operator's informers hold: a GET of one is a request the
// listers should have answered. Keys are "group/resource" (core has an empty group).
var cachedResources = map[string]bool{
	"image.openshift.io/imagestreams":       true,
	"template.openshift.io/templates":       true,
	"samples.operator.openshift.io/configs": true,
	"/configmaps":                           true,
	"/secrets":                              true,
	"config.openshift.io/clusteroperators":  true,
	"config.openshift.io/images":            true,
	"config.openshift.io/proxies":           true,
	"config.openshift.io/networks":          true,
}

func (r request) isCachedGet() bool {
	return r.Verb == "get" && cachedResources[r.Group+"/"+r.Resource]
}

// RequestStats counts a window's requests.
type RequestStats struct {
	Total int `json:"total"`
	// ByVerb counts every request by verb (list, watch, get, create, update, patch, delete).
	ByVerb map[string]int `json:"byVerb"`
	// ByVerbResource counts by "verb resource[/subresource]".
	ByVerbResource map[string]int `json:"byVerbResource"`
	// Writes counts writes other than Events (Lease writes included); EventWrites the Events.
	Writes      int `json:"writes"`
	EventWrites int `json:"eventWrites"`
	LeaseWrites int `json:"leaseWrites"`
	// SampleWrites counts writes of imagestreams and templates.
	SampleWrites int `json:"sampleWrites"`
	// CachedGets lists GETs of a kind an informer caches, as "get resource name (code)".
	CachedGets []string `json:"cachedGets,omitempty"`
	// Errors counts responses with a code of 400 or more by "verb resource code".
	Errors map[string]int `json:"errors,omitempty"`
}

// errorCount is the number of error responses.
func (s RequestStats) errorCount() int {
	n := 0
	for _, v := range s.Errors {
		n += v
	}
	return n
}

func countRequests(reqs []request) RequestStats {
	s := RequestStats{ByVerb: map[string]int{}, ByVerbResource: map[string]int{}}
	for _, r := range reqs {
		s.Total++
		s.ByVerb[r.Verb]++
		s.ByVerbResource[r.key()]++
		if r.Code >= 400 {
			if s.Errors == nil {
				s.Errors = map[string]int{}
			}
			s.Errors[fmt.Sprintf("%s %d", r.key(), r.Code)]++
		}
		if r.isCachedGet() {
			s.CachedGets = append(s.CachedGets, "get "+r.Resource+" "+r.Namespace+"/"+r.Name)
		}
		if !r.isWrite() {
			continue
		}
		switch r.Resource {
		case "events":
			s.EventWrites++
			continue
		case "leases":
			s.LeaseWrites++
		case "imagestreams", "templates":
			s.SampleWrites++
		}
		s.Writes++
	}
	return s
}

// Timeline places the initial sync's milestones, in seconds from the operator's process start,
// as the audit log shows them: where the time goes before convergence. -1 means not seen.
type Timeline struct {
	FirstRequest     float64 `json:"firstRequest"`
	LastWatchStarted float64 `json:"lastWatchStarted"`
	ConfigCreated    float64 `json:"configCreated"`
	FirstSampleWrite float64 `json:"firstSampleWrite"`
	LastSampleWrite  float64 `json:"lastSampleWrite"`
	LastStatusWrite  float64 `json:"lastStatusWrite"`
}

func timeline(reqs []request, start time.Time) Timeline {
	t := Timeline{FirstRequest: -1, LastWatchStarted: -1, ConfigCreated: -1, FirstSampleWrite: -1, LastSampleWrite: -1, LastStatusWrite: -1}
	for _, r := range reqs {
		at := r.Received.Sub(start).Seconds()
		if t.FirstRequest < 0 || at < t.FirstRequest {
			t.FirstRequest = at
		}
		switch {
		case r.Verb == "watch" && r.Code < 400:
			t.LastWatchStarted = max(t.LastWatchStarted, at)
		case r.Verb == "create" && r.Resource == "configs":
			t.ConfigCreated = at
		case r.isWrite() && (r.Resource == "imagestreams" || r.Resource == "templates"):
			if t.FirstSampleWrite < 0 || at < t.FirstSampleWrite {
				t.FirstSampleWrite = at
			}
			t.LastSampleWrite = max(t.LastSampleWrite, at)
		case r.isWrite() && (r.Resource == "configs" || r.Resource == "clusteroperators") && r.Subresource == "status":
			t.LastStatusWrite = max(t.LastStatusWrite, at)
		}
	}
	return t
}
