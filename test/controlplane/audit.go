package controlplane

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"slices"
	"time"
)

// AuditEvent is one request as the API server's audit log recorded it.
type AuditEvent struct {
	ID          string // the audit ID; the stages of one request share it
	Stage       string // RequestReceived (writes only), ResponseStarted (a watch), ResponseComplete, Panic
	User        string
	UserAgent   string
	Verb        string // get, list, watch, create, update, patch, delete
	Group       string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	Received    time.Time // when the API server received the request
	Time        time.Time // when this stage was logged
}

// IsWrite reports whether the request could change stored state.
func (e AuditEvent) IsWrite() bool {
	switch e.Resource {
	case "selfsubjectaccessreviews", "subjectaccessreviews", "tokenreviews":
		// Questions sent as creates: the API server answers them and stores nothing.
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// ParseAuditLine decodes one line of the JSON audit log; ok is false for a line that is not an
// audit event.
func ParseAuditLine(line []byte) (e AuditEvent, ok bool) {
	var raw struct {
		AuditID   string `json:"auditID"`
		Stage     string `json:"stage"`
		Verb      string `json:"verb"`
		UserAgent string `json:"userAgent"`
		User      struct {
			Username string `json:"username"`
		} `json:"user"`
		ObjectRef *struct {
			APIGroup    string `json:"apiGroup"`
			Resource    string `json:"resource"`
			Subresource string `json:"subresource"`
			Namespace   string `json:"namespace"`
			Name        string `json:"name"`
		} `json:"objectRef"`
		ResponseStatus *struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
		RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
		StageTimestamp           time.Time `json:"stageTimestamp"`
	}
	if err := json.Unmarshal(line, &raw); err != nil || raw.Verb == "" {
		return AuditEvent{}, false
	}
	e = AuditEvent{
		ID: raw.AuditID, Stage: raw.Stage, User: raw.User.Username, UserAgent: raw.UserAgent, Verb: raw.Verb,
		Received: raw.RequestReceivedTimestamp, Time: raw.StageTimestamp,
	}
	if raw.ObjectRef != nil {
		e.Group, e.Resource, e.Subresource = raw.ObjectRef.APIGroup, raw.ObjectRef.Resource, raw.ObjectRef.Subresource
		e.Namespace, e.Name = raw.ObjectRef.Namespace, raw.ObjectRef.Name
	}
	if raw.ResponseStatus != nil {
		e.Code = raw.ResponseStatus.Code
	}
	return e, true
}

// AuditEvents reads the completed requests a user made so far (every user when user is "").
// kube-apiserver's log does not name the object of a create it proxies to openshift-apiserver
// (it never decodes the body); with the real server the name comes from that server's own audit
// log, which records the same audit ID.
func (cp *ControlPlane) AuditEvents(user string) ([]AuditEvent, error) {
	names := map[string]string{}
	if cp.RealOpenShiftAPIServer() {
		osa, err := cp.completedRequests(cp.osaAuditLogPath())
		if err != nil {
			return nil, err
		}
		for _, e := range osa {
			if e.Verb == "create" && e.Name != "" {
				names[e.ID] = e.Name
			}
		}
	}
	all, err := cp.completedRequests(cp.AuditLogPath)
	if err != nil {
		return nil, err
	}
	var out []AuditEvent
	for _, e := range all {
		if user != "" && e.User != user {
			continue
		}
		if e.Name == "" && names[e.ID] != "" {
			e.Name = names[e.ID]
		}
		out = append(out, e)
	}
	return out, nil
}

// auditTail is what has been read of one audit log: the completed requests in its first offset
// bytes.
type auditTail struct {
	offset int64
	events []AuditEvent
	// writesInFlight holds, by audit ID, the writes whose RequestReceived stage is in the log and
	// whose completion is not yet.
	writesInFlight map[string]AuditEvent
	// reader's buffer serves every read of the log: the tests poll the logs many times a
	// second, and a buffer made for each read was 5 % of the integration test binary's CPU
	// (clearing and collecting it).
	reader *bufio.Reader
}

// completedRequests returns every completed request in the JSON audit log at path, parsing only
// the whole lines appended since the last call; a missing log holds none. The slice returned is
// shared: callers must not modify it.
func (cp *ControlPlane) completedRequests(path string) ([]AuditEvent, error) {
	cp.auditMu.Lock()
	defer cp.auditMu.Unlock()
	tail, err := cp.readAuditLocked(path)
	if err != nil || tail == nil {
		return nil, err
	}
	return tail.events[:len(tail.events):len(tail.events)], nil
}

// WritesInFlight lists the writes of user (every user for "") that kube-apiserver has received
// and not answered yet. The object a write stores can be read before its completion is in the
// audit log (the response, and its ResponseComplete line, come after the store): a test that
// waits for the operator to be done looks here as well as at the completed requests.
func (cp *ControlPlane) WritesInFlight(user string) ([]AuditEvent, error) {
	cp.auditMu.Lock()
	defer cp.auditMu.Unlock()
	tail, err := cp.readAuditLocked(cp.AuditLogPath)
	if err != nil || tail == nil {
		return nil, err
	}
	var out []AuditEvent
	for _, e := range tail.writesInFlight {
		if (user == "" || e.User == user) && e.IsWrite() {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b AuditEvent) int { return a.Received.Compare(b.Received) })
	return out, nil
}

// readAuditLocked brings what has been read of the audit log at path up to its end: nil for a
// log that does not exist yet. cp.auditMu is held.
func (cp *ControlPlane) readAuditLocked(path string) (*auditTail, error) {
	if cp.audit == nil {
		cp.audit = map[string]*auditTail{}
	}
	tail := cp.audit[path]
	if tail == nil {
		tail = &auditTail{}
		cp.audit[path] = tail
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if info.Size() < tail.offset {
		// Started over (not something kube-apiserver does on a restart, but cheap to handle).
		*tail = auditTail{}
	}
	if _, err := f.Seek(tail.offset, io.SeekStart); err != nil {
		return nil, err
	}
	if tail.reader == nil {
		tail.reader = bufio.NewReaderSize(f, 64<<10)
	}
	r := tail.reader
	r.Reset(f)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			// A partial last line is read again, whole, next time.
			break
		}
		if err != nil {
			return nil, err
		}
		tail.offset += int64(len(line))
		e, ok := ParseAuditLine(line)
		if !ok {
			continue
		}
		// A watch logs ResponseStarted and ResponseComplete; count each request once.
		switch e.Stage {
		case "RequestReceived":
			if tail.writesInFlight == nil {
				tail.writesInFlight = map[string]AuditEvent{}
			}
			tail.writesInFlight[e.ID] = e
		case "ResponseComplete", "Panic":
			delete(tail.writesInFlight, e.ID)
			tail.events = append(tail.events, e)
		}
	}
	return tail, nil
}
