package samplewriter

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldManager is the operator's name in the samples' managedFields. It is also the manager the
// API server derived from the operator's user agent before the writer named it, so samples
// written by earlier versions count as the operator's too.
const FieldManager = "cluster-samples-operator"

// OtherOwner names a field manager other than the operator's that owns one of the drift fields
// (desired.Action Drift, "spec.tags[latest].from") in managedFields; "" when none does. With no
// record of its own writes (after a restart), this is how the operator tells its own earlier
// write (an upgrade, a Config change it had not finished following) from someone else's edit:
// whoever last changed a field's value owns it. A drift field that no one owns (removed, or never
// set) counts as the operator's: only an owner proves another writer.
func OtherOwner(entries []metav1.ManagedFieldsEntry, drift []string) string {
	for _, entry := range entries {
		if entry.Manager == FieldManager || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		var fields map[string]interface{}
		if json.Unmarshal(entry.FieldsV1.Raw, &fields) != nil {
			continue
		}
		for _, field := range drift {
			if owns(fields, fieldPath(field)) {
				return entry.Manager
			}
		}
	}
	return ""
}

// owns reports whether the field set holds path, or an ancestor of it as a leaf (an atomic
// list or map is owned whole).
func owns(set map[string]interface{}, path []string) bool {
	for i, key := range path {
		child, ok := set[key]
		if !ok {
			return false
		}
		next, _ := child.(map[string]interface{})
		if i == len(path)-1 || len(next) == 0 {
			return true
		}
		set = next
	}
	return false
}

// fieldPath turns a drift field into managedFields keys: "metadata.labels[a.b/c]" is
// f:metadata, f:labels, f:a.b/c; "spec.tags[latest].from" is f:spec, f:tags,
// k:{"name":"latest"}, f:from; a template's "objects[3]" is f:objects (a list owned whole).
func fieldPath(drift string) []string {
	var path []string
	rest := drift
	for rest != "" {
		var part string
		if i := strings.IndexAny(rest, ".["); i < 0 {
			part, rest = rest, ""
		} else if rest[i] == '.' {
			part, rest = rest[:i], rest[i+1:]
		} else {
			part = rest[:i]
			end := strings.IndexByte(rest[i:], ']')
			if end < 0 {
				return append(path, "f:"+rest)
			}
			key := rest[i+1 : i+end]
			rest = strings.TrimPrefix(rest[i+end+1:], ".")
			path = append(path, "f:"+part)
			switch part {
			case "labels", "annotations":
				path = append(path, "f:"+key)
			case "tags":
				k, _ := json.Marshal(map[string]string{"name": key})
				path = append(path, "k:"+string(k))
			}
			continue
		}
		if part != "" {
			path = append(path, "f:"+part)
		}
	}
	return path
}
