package controlplane

import (
	"bufio"
	"encoding/json"
	"os"
	"time"
)

// AuditEvent is one request as the API server's audit log recorded it.
type AuditEvent struct {
	User        string
	UserAgent   string
	Verb        string // get, list, watch, create, update, patch, delete
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	Time        time.Time
}

// IsWrite reports whether the request could change stored state.
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// AuditEvents reads the requests a user made so far (every user when user is "").
func (cp *ControlPlane) AuditEvents(user string) ([]AuditEvent, error) {
	f, err := os.Open(cp.AuditLogPath)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var raw struct {
			Verb      string `json:"verb"`
			UserAgent string `json:"userAgent"`
			User      struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			StageTimestamp time.Time `json:"stageTimestamp"`
			Stage          string    `json:"stage"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &raw); err != nil {
			continue
		}
		// A watch logs ResponseStarted and ResponseComplete; count each request once.
		if raw.Stage != "ResponseComplete" && raw.Stage != "Panic" {
			continue
		}
		if user != "" && raw.User.Username != user {
			continue
		}
		e := AuditEvent{User: raw.User.Username, UserAgent: raw.UserAgent, Verb: raw.Verb, Time: raw.StageTimestamp}
		if raw.ObjectRef != nil {
			e.Resource, e.Subresource, e.Namespace, e.Name = raw.ObjectRef.Resource, raw.ObjectRef.Subresource, raw.ObjectRef.Namespace, raw.ObjectRef.Name
		}
		if raw.ResponseStatus != nil {
			e.Code = raw.ResponseStatus.Code
		}
		out = append(out, e)
	}
	return out, scanner.Err()
}
