package desired

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"

	templatev1 "github.com/openshift/api/template/v1"
)

// ContentDigestAnnotation holds, on a template in the operator's informer cache, the digests of
// the content the operator owns (message, parameters, object labels, each object), which
// TrimTemplate removed from the cached copy. The object labels and objects are most of a
// template's size and all the operator compares of them is whether they are as it wants them, so
// the cache need not hold them: a digest answers that. The key is never written to the server:
// writes are built from the whole object (IsTrimmed tells them apart).
const ContentDigestAnnotation = "cache.samples.operator.openshift.io/content-digest"

// TrimTemplate replaces the owned content of t with its digests (ContentDigestAnnotation), in
// place; a template trimmed already is left as it is. The owned labels and annotations stay:
// they are few and compared as they are.
//
// A retired template stays whole: the operator has no inventory copy of it, and its verdict on
// whether it can work here (pkg/usability) reads its objects. Retirements are few.
func TrimTemplate(t *templatev1.Template) {
	if IsTrimmed(t) || t.Annotations[RetiredAnnotation] != "" {
		return
	}
	digest := computeTemplateContent(t).String()
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[ContentDigestAnnotation] = digest
	t.Message, t.Parameters, t.ObjectLabels, t.Objects = "", nil, nil, nil
}

// DropContentDigest removes the cache's key from a template read from the server, which is whole
// whatever it carries: the key is the operator's, and an update built from the template then
// writes it without the key.
func DropContentDigest(t *templatev1.Template) {
	delete(t.Annotations, ContentDigestAnnotation)
}

// IsTrimmed reports whether t is a cached summary (TrimTemplate) rather than the whole object:
// it has the digests and none of the content. (A whole template always has objects.)
func IsTrimmed(t *templatev1.Template) bool {
	if t == nil {
		return false
	}
	_, ok := t.Annotations[ContentDigestAnnotation]
	return ok && len(t.Objects) == 0 && t.Message == "" && len(t.Parameters) == 0 && len(t.ObjectLabels) == 0
}

// templateContent is the owned content of a template as digests, compared field by field so that
// drift still names the fields that differ. Equal digests mean equal content as mergeTemplate
// compares it: the message as a string, parameters and object labels as values (none and empty
// alike), each object as a JSON value (key order and formatting aside).
type templateContent struct {
	message, parameters, objectLabels string
	objects                           []string
}

func (c templateContent) String() string {
	return "m=" + c.message + ";p=" + c.parameters + ";l=" + c.objectLabels + ";o=" + strings.Join(c.objects, ",")
}

// parseTemplateContent reads String's form; ok is false for anything else.
func parseTemplateContent(s string) (c templateContent, ok bool) {
	parts := strings.Split(s, ";")
	if len(parts) != 4 {
		return c, false
	}
	values := make([]string, 4)
	for i, prefix := range []string{"m=", "p=", "l=", "o="} {
		v, found := strings.CutPrefix(parts[i], prefix)
		if !found {
			return c, false
		}
		values[i] = v
	}
	c.message, c.parameters, c.objectLabels = values[0], values[1], values[2]
	if values[3] != "" {
		c.objects = strings.Split(values[3], ",")
	}
	return c, true
}

// templateContentOf returns the digests of t's owned content: read from a trimmed template,
// computed from a whole one.
func templateContentOf(t *templatev1.Template) templateContent {
	if IsTrimmed(t) {
		if c, ok := parseTemplateContent(t.Annotations[ContentDigestAnnotation]); ok {
			return c
		}
		// Not the operator's form: digests no content has, so the template counts as drifted
		// and is read whole before it is written.
		return templateContent{message: "?", parameters: "?", objectLabels: "?", objects: []string{"?"}}
	}
	return computeTemplateContent(t)
}

func computeTemplateContent(t *templatev1.Template) templateContent {
	c := templateContent{message: digestOf([]byte(t.Message))}
	if len(t.Parameters) > 0 {
		raw, _ := json.Marshal(t.Parameters)
		c.parameters = digestOf(raw)
	}
	if len(t.ObjectLabels) > 0 {
		raw, _ := json.Marshal(t.ObjectLabels) // keys sorted
		c.objectLabels = digestOf(raw)
	}
	c.objects = make([]string, len(t.Objects))
	for i := range t.Objects {
		c.objects[i] = objectDigest(rawOf(t, i))
	}
	return c
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	// 128 bits: no collision among the few thousand values a cluster ever compares.
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// objectDigest digests a template object as a JSON value: the server keeps objects compacted
// and may reorder keys, the inventory has them as written. Bytes that are not JSON are digested
// as bytes, so that they equal only the same bytes.
func objectDigest(raw []byte) string {
	key := sha256.Sum256(raw)
	if d, ok := objectDigests.get(key); ok {
		return d
	}
	d := "r" + digestOf(raw)
	var v interface{}
	if json.Unmarshal(raw, &v) == nil {
		if canonical, err := json.Marshal(withoutNegativeZero(v)); err == nil { // map keys sorted
			d = "j" + digestOf(canonical)
		}
	}
	objectDigests.put(key, d)
	return d
}

// withoutNegativeZero makes -0 and 0 one value, as they are when compared as numbers.
func withoutNegativeZero(v interface{}) interface{} {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return float64(0)
		}
	case map[string]interface{}:
		for k, e := range x {
			x[k] = withoutNegativeZero(e)
		}
	case []interface{}:
		for i, e := range x {
			x[i] = withoutNegativeZero(e)
		}
	}
	return v
}

// objectDigests remembers the digest of each object's bytes: the inventory's objects are
// digested on every comparison, and decoding them each time would make most of the operator's
// garbage. Bounded: when full it starts over.
var objectDigests = &digestMemo{m: map[[32]byte]string{}}

const digestMemoMax = 8192

type digestMemo struct {
	mu sync.Mutex
	m  map[[32]byte]string
}

func (d *digestMemo) get(key [32]byte) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.m[key]
	return v, ok
}

func (d *digestMemo) put(key [32]byte, v string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.m) >= digestMemoMax {
		clear(d.m)
	}
	d.m[key] = v
}
