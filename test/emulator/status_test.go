package emulator

import (
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
)

const (
	refA  = "registry.example.com/org/ruby:3.3"
	refB  = "registry.example.com/org/ruby:3.4"
	refC  = "quay.io/org/python@sha256:0123"
	regNS = "openshift"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Hour))
	t2 = metav1.NewTime(t0.Add(2 * time.Hour))
)

func docker(name, ref string) imagev1.TagReference {
	return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: kindDockerImage, Name: ref}}
}

func istag(name, target string) imagev1.TagReference {
	return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: kindImageStreamTag, Name: target}}
}

func withGen(t imagev1.TagReference, gen int64) imagev1.TagReference {
	t.Generation = &gen
	return t
}

func stream(gen int64, spec []imagev1.TagReference, status ...imagev1.NamedTagEventList) *imagev1.ImageStream {
	return &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: regNS, Generation: gen},
		Spec:       imagev1.ImageStreamSpec{Tags: spec},
		Status:     imagev1.ImageStreamStatus{Tags: status},
	}
}

func ok(ref string, created metav1.Time, gen int64) imagev1.TagEvent {
	return imagev1.TagEvent{Created: created, DockerImageReference: pullSpec(ref), Image: imageID(ref), Generation: gen}
}

func failed(reason, msg string, at metav1.Time, gen int64) imagev1.TagEventCondition {
	return imagev1.TagEventCondition{
		Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse,
		Reason: reason, Message: msg, LastTransitionTime: at, Generation: gen,
	}
}

func entry(tag string, items []imagev1.TagEvent, conds ...imagev1.TagEventCondition) imagev1.NamedTagEventList {
	return imagev1.NamedTagEventList{Tag: tag, Items: items, Conditions: conds}
}

func events(ev ...imagev1.TagEvent) []imagev1.TagEvent { return ev }

func failRules(pairs ...string) rules {
	r := rules{exact: map[string]outcome{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		r.exact[pairs[i]] = outcome{fail: true, reason: DefaultFailureReason, message: pairs[i+1]}
	}
	return r
}

const repo = internalRegistry + "/" + regNS + "/ruby"

func TestImportedStatus(t *testing.T) {
	noRules := rules{}
	tests := []struct {
		name     string
		stream   *imagev1.ImageStream
		rules    rules
		previous map[string]string
		requests map[string]string

		want         []imagev1.NamedTagEventList
		wantImported map[string]string
		wantAttempts []string // "tag=ref" or "tag=ref!" for failures
		unstable     bool     // a second evaluation is expected to import again
	}{
		{
			name:         "new tag is imported with stream generation",
			stream:       stream(3, []imagev1.TagReference{docker("3.3", refA)}),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 3)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:         "spec tag generation wins over stream generation",
			stream:       stream(7, []imagev1.TagReference{withGen(docker("3.3", refA), 5)}),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 5)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:         "zero spec tag generation falls back to stream generation",
			stream:       stream(7, []imagev1.TagReference{withGen(docker("3.3", refA), 0)}),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 7)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "imported tag is kept without memory (judged by status)",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 1)))),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "imported tag is kept with memory",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 1)))),
			previous:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "changed reference is re-imported, history kept",
			stream: stream(4, []imagev1.TagReference{docker("3.3", refB)},
				entry("3.3", events(ok(refA, t0, 1)))),
			previous:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refB, t2, 4), ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refB},
			wantAttempts: []string{"3.3=" + refB},
		},
		{
			name: "changed reference is re-imported without memory",
			stream: stream(4, []imagev1.TagReference{docker("3.3", refB)},
				entry("3.3", events(ok(refA, t0, 1)))),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refB, t2, 4), ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refB},
			wantAttempts: []string{"3.3=" + refB},
		},
		{
			name:         "new tag matching a failure rule gets a condition and no items",
			stream:       stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			rules:        failRules(refA, "manifest unknown"),
			want:         []imagev1.NamedTagEventList{entry("3.3", nil, failed("NotFound", "manifest unknown", t2, 2))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name:   "custom failure reason",
			stream: stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			rules: rules{exact: map[string]outcome{
				refA: {fail: true, reason: "Unauthorized", message: "denied"},
			}},
			want:         []imagev1.NamedTagEventList{entry("3.3", nil, failed("Unauthorized", "denied", t2, 2))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name:   "failure rule without reason defaults to NotFound",
			stream: stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			rules: rules{exact: map[string]outcome{
				refA: {fail: true, message: "gone"},
			}},
			want:         []imagev1.NamedTagEventList{entry("3.3", nil, failed("NotFound", "gone", t2, 2))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name: "failed re-import keeps earlier items",
			stream: stream(5, []imagev1.TagReference{docker("3.3", refB)},
				entry("3.3", events(ok(refA, t0, 1)))),
			previous:     map[string]string{"3.3": refA},
			rules:        failRules(refB, "nope"),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 1)), failed("NotFound", "nope", t2, 5))},
			wantImported: map[string]string{"3.3": refB},
			wantAttempts: []string{"3.3=" + refB + "!"},
		},
		{
			name: "failure stays when the rule is lifted (with memory)",
			stream: stream(5, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", nil, failed("NotFound", "nope", t0, 5))),
			previous:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", nil, failed("NotFound", "nope", t0, 5))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "failure stays when the rule is lifted (without memory)",
			stream: stream(5, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refB, t0, 1)), failed("NotFound", "nope", t0, 5))),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refB, t0, 1)), failed("NotFound", "nope", t0, 5))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "a rule added after a successful import changes nothing",
			stream: stream(5, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 1)))),
			previous:     map[string]string{"3.3": refA},
			rules:        failRules(refA, "nope"),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "spec tag generation newer than the failure re-imports without memory",
			stream: stream(8, []imagev1.TagReference{withGen(docker("3.3", refA), 8)},
				entry("3.3", nil, failed("NotFound", "nope", t0, 5))),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 8)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:         "status entry lost is re-imported even with memory",
			stream:       stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			previous:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 2)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "request re-imports a failed tag that now succeeds",
			stream: stream(5, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", nil, failed("NotFound", "nope", t0, 5))),
			previous:     map[string]string{"3.3": refA},
			requests:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 5)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "request re-imports a failed tag that fails again with a new message",
			stream: stream(6, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refB, t0, 1)), failed("NotFound", "old", t0, 5))),
			previous:     map[string]string{"3.3": refA},
			requests:     map[string]string{"3.3": refA},
			rules:        failRules(refA, "new"),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refB, t0, 1)), failed("NotFound", "new", t2, 6))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name: "identical repeated failure keeps its transition time",
			stream: stream(6, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", nil, failed("NotFound", "same", t0, 5))),
			previous:     map[string]string{"3.3": refA},
			requests:     map[string]string{"3.3": refA},
			rules:        failRules(refA, "same"),
			want:         []imagev1.NamedTagEventList{entry("3.3", nil, failed("NotFound", "same", t0, 6))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name: "request for an imported tag keeps its event",
			stream: stream(6, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 6)))),
			previous:     map[string]string{"3.3": refA},
			requests:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 6)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "request for an imported tag takes over a newer generation",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 6)))),
			previous:     map[string]string{"3.3": refA},
			requests:     map[string]string{"3.3": refA},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 9)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			// The stream spec is not changed by a request, so the next
			// evaluation imports the spec reference again.
			name:         "request uses its own reference",
			stream:       stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			requests:     map[string]string{"3.3": refB},
			unstable:     true,
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refB, t2, 2)))},
			wantImported: map[string]string{"3.3": refB},
			wantAttempts: []string{"3.3=" + refB},
		},
		{
			name:         "request for a tag not in spec is ignored",
			stream:       stream(2, []imagev1.TagReference{docker("3.3", refA)}),
			requests:     map[string]string{"other": refB},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 2)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "only the requested tag is re-imported",
			stream: stream(3, []imagev1.TagReference{docker("a", refA), docker("b", refB)},
				entry("a", nil, failed("NotFound", "x", t0, 1)), entry("b", nil, failed("NotFound", "y", t0, 1))),
			previous: map[string]string{"a": refA, "b": refB},
			requests: map[string]string{"b": refB},
			want: []imagev1.NamedTagEventList{
				entry("a", nil, failed("NotFound", "x", t0, 1)),
				entry("b", events(ok(refB, t2, 3))),
			},
			wantImported: map[string]string{"a": refA, "b": refB},
			wantAttempts: []string{"b=" + refB},
		},
		{
			name: "status tags no longer in spec are removed",
			stream: stream(2, []imagev1.TagReference{docker("3.3", refA)},
				entry("3.3", events(ok(refA, t0, 1))), entry("gone", events(ok(refB, t0, 1)))),
			previous:     map[string]string{"3.3": refA, "gone": refB},
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t0, 1)))},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "tag without from keeps its entry",
			stream: stream(2, []imagev1.TagReference{{Name: "pushed"}, {Name: "empty"}},
				entry("pushed", events(ok(refB, t0, 1)))),
			want:         []imagev1.NamedTagEventList{entry("pushed", events(ok(refB, t0, 1)))},
			wantImported: map[string]string{},
		},
		{
			name: "ImageStreamImage tag keeps its entry",
			stream: stream(2, []imagev1.TagReference{{Name: "pinned", From: &corev1.ObjectReference{Kind: "ImageStreamImage", Name: "ruby@sha256:1"}}},
				entry("pinned", events(ok(refB, t0, 1)))),
			want:         []imagev1.NamedTagEventList{entry("pinned", events(ok(refB, t0, 1)))},
			wantImported: map[string]string{},
		},
		{
			name: "reference tag records the reference itself, never fails",
			stream: func() *imagev1.ImageStream {
				tr := docker("ref", refA)
				tr.Reference = true
				return stream(4, []imagev1.TagReference{tr})
			}(),
			rules: failRules(refA, "nope"),
			want: []imagev1.NamedTagEventList{entry("ref", events(imagev1.TagEvent{
				Created: t2, DockerImageReference: refA, Generation: 4,
			}))},
			wantImported: map[string]string{},
		},
		{
			name: "reference tag is stable",
			stream: func() *imagev1.ImageStream {
				tr := docker("ref", refA)
				tr.Reference = true
				return stream(6, []imagev1.TagReference{tr}, entry("ref", events(imagev1.TagEvent{
					Created: t0, DockerImageReference: refA, Generation: 4,
				})))
			}(),
			want: []imagev1.NamedTagEventList{entry("ref", events(imagev1.TagEvent{
				Created: t0, DockerImageReference: refA, Generation: 4,
			}))},
			wantImported: map[string]string{},
		},
		{
			name: "tag switched from reference to import is imported",
			stream: stream(6, []imagev1.TagReference{docker("ref", refA)}, entry("ref", events(imagev1.TagEvent{
				Created: t0, DockerImageReference: refA, Generation: 4,
			}))),
			want: []imagev1.NamedTagEventList{entry("ref", events(ok(refA, t2, 6), imagev1.TagEvent{
				Created: t0, DockerImageReference: refA, Generation: 4,
			}))},
			wantImported: map[string]string{"ref": refA},
			wantAttempts: []string{"ref=" + refA},
		},
		{
			name:   "ImageStreamTag mirrors its target",
			stream: stream(2, []imagev1.TagReference{istag("latest", "3.3"), docker("3.3", refA)}),
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 2))),
				entry("latest", events(ok(refA, t2, 2))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:   "ImageStreamTag with stream name mirrors its target",
			stream: stream(2, []imagev1.TagReference{docker("3.3", refA), istag("latest", "ruby:3.3")}),
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 2))),
				entry("latest", events(ok(refA, t2, 2))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "ImageStreamTag chain resolves to the end",
			stream: stream(2, []imagev1.TagReference{
				istag("latest", "stable"), istag("stable", "3.3"), docker("3.3", refA),
			}),
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 2))),
				entry("latest", events(ok(refA, t2, 2))),
				entry("stable", events(ok(refA, t2, 2))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			// As openshift-apiserver: the condition stays on the imported tag, the follower gets
			// no entry until there is an event to copy.
			name:   "ImageStreamTag does not copy a failure",
			stream: stream(2, []imagev1.TagReference{docker("3.3", refA), istag("latest", "3.3")}),
			rules:  failRules(refA, "nope"),
			want: []imagev1.NamedTagEventList{
				entry("3.3", nil, failed("NotFound", "nope", t2, 2)),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA + "!"},
		},
		{
			name: "ImageStreamTag mirror is stable",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA), istag("latest", "3.3")},
				entry("3.3", events(ok(refA, t0, 1))), entry("latest", events(ok(refA, t1, 2)))),
			previous: map[string]string{"3.3": refA},
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t0, 1))),
				entry("latest", events(ok(refA, t1, 2))),
			},
			wantImported: map[string]string{"3.3": refA},
		},
		{
			name: "ImageStreamTag follows a retarget",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA), docker("3.4", refB), istag("latest", "3.4")},
				entry("3.3", events(ok(refA, t0, 1))), entry("3.4", events(ok(refB, t0, 1))), entry("latest", events(ok(refA, t1, 2)))),
			previous: map[string]string{"3.3": refA, "3.4": refB},
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t0, 1))),
				entry("3.4", events(ok(refB, t0, 1))),
				entry("latest", events(ok(refB, t2, 9), ok(refA, t1, 2))),
			},
			wantImported: map[string]string{"3.3": refA, "3.4": refB},
		},
		{
			name: "ImageStreamTag follows a recovered target",
			stream: stream(9, []imagev1.TagReference{docker("3.3", refA), istag("latest", "3.3")},
				entry("3.3", nil, failed("NotFound", "nope", t0, 1))),
			previous: map[string]string{"3.3": refA},
			requests: map[string]string{"3.3": refA},
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 9))),
				entry("latest", events(ok(refA, t2, 9))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "unresolvable ImageStreamTags keep their entries",
			stream: func() *imagev1.ImageStream {
				otherNS := istag("otherns", "3.3")
				otherNS.From.Namespace = "elsewhere"
				return stream(2, []imagev1.TagReference{
					istag("missing", "9.9"), istag("other", "python:3.3"), otherNS,
					istag("self", "self"), istag("a", "b"), istag("b", "a"), istag("empty", ""),
					istag("untracked", "pushed"), {Name: "pushed"},
					docker("3.3", refA),
				}, entry("missing", events(ok(refB, t0, 1))))
			}(),
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 2))),
				entry("missing", events(ok(refB, t0, 1))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name: "same-namespace ImageStreamTag is resolved",
			stream: func() *imagev1.ImageStream {
				l := istag("latest", "3.3")
				l.From.Namespace = regNS
				return stream(2, []imagev1.TagReference{l, docker("3.3", refA)})
			}(),
			want: []imagev1.NamedTagEventList{
				entry("3.3", events(ok(refA, t2, 2))),
				entry("latest", events(ok(refA, t2, 2))),
			},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:         "duplicate spec tags: first wins",
			stream:       stream(2, []imagev1.TagReference{docker("3.3", refA), docker("3.3", refB)}),
			want:         []imagev1.NamedTagEventList{entry("3.3", events(ok(refA, t2, 2)))},
			wantImported: map[string]string{"3.3": refA},
			wantAttempts: []string{"3.3=" + refA},
		},
		{
			name:   "status is sorted by tag",
			stream: stream(1, []imagev1.TagReference{docker("b", refB), docker("a", refA), docker("c", refC)}),
			want: []imagev1.NamedTagEventList{
				entry("a", events(ok(refA, t2, 1))),
				entry("b", events(ok(refB, t2, 1))),
				entry("c", events(ok(refC, t2, 1))),
			},
			wantImported: map[string]string{"a": refA, "b": refB, "c": refC},
			wantAttempts: []string{"b=" + refB, "a=" + refA, "c=" + refC},
		},
		{
			name:         "empty spec",
			stream:       stream(1, nil, entry("x", events(ok(refA, t0, 1)))),
			wantImported: map[string]string{},
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rules
			if r.exact == nil && r.matchers == nil {
				r = noRules
			}
			before := tc.stream.DeepCopy()
			got := importedStatus(tc.stream, r, t2, tc.previous, tc.requests)

			if !equality.Semantic.DeepEqual(before, tc.stream) {
				t.Errorf("input stream modified:\n%s", diff.Diff(before, tc.stream))
			}
			want := imagev1.ImageStreamStatus{DockerImageRepository: repo, Tags: tc.want}
			if !equality.Semantic.DeepEqual(got.status, want) {
				t.Errorf("status mismatch (-want +got):\n%s", diff.Diff(want, got.status))
			}
			if !equality.Semantic.DeepEqual(got.imported, tc.wantImported) {
				t.Errorf("imported = %v, want %v", got.imported, tc.wantImported)
			}
			var attempts []string
			for _, a := range got.attempts {
				s := a.tag + "=" + a.ref
				if a.failed {
					s += "!"
				}
				attempts = append(attempts, s)
			}
			if strings.Join(attempts, " ") != strings.Join(tc.wantAttempts, " ") {
				t.Errorf("attempts = %v, want %v", attempts, tc.wantAttempts)
			}

			if tc.unstable {
				return
			}
			// Evaluating the result again, later and with the returned memory,
			// changes nothing and imports nothing.
			again := tc.stream.DeepCopy()
			again.Status = got.status
			second := importedStatus(again, r, metav1.NewTime(t2.Add(time.Hour)), got.imported, nil)
			if !equality.Semantic.DeepEqual(second.status, got.status) {
				t.Errorf("second evaluation changed the status:\n%s", diff.Diff(got.status, second.status))
			}
			if len(second.attempts) != 0 {
				t.Errorf("second evaluation imported %v", second.attempts)
			}
			// The same holds without memory (emulator restart).
			third := importedStatus(again, r, metav1.NewTime(t2.Add(2*time.Hour)), nil, nil)
			if !equality.Semantic.DeepEqual(third.status, got.status) {
				t.Errorf("evaluation without memory changed the status:\n%s", diff.Diff(got.status, third.status))
			}
		})
	}
}

func TestImportedStatusKeepsPublicRepository(t *testing.T) {
	s := stream(1, nil)
	s.Status.PublicDockerImageRepository = "registry.apps.example.com/openshift/ruby"
	s.Status.DockerImageRepository = "stale"
	got := importedStatus(s, rules{}, t0, nil, nil)
	if got.status.PublicDockerImageRepository != s.Status.PublicDockerImageRepository {
		t.Errorf("public repository = %q", got.status.PublicDockerImageRepository)
	}
	if got.status.DockerImageRepository != repo {
		t.Errorf("repository = %q, want %q", got.status.DockerImageRepository, repo)
	}
}

func TestRulesEvaluate(t *testing.T) {
	r := rules{
		exact: map[string]outcome{
			refA:    {fail: true, reason: "Unauthorized", message: "exact"},
			"ok/me": {},
		},
		matchers: []Matcher{
			nil,
			func(ref string) (string, bool) { return "first", strings.HasPrefix(ref, "quay.io/") },
			func(ref string) (string, bool) { return "second", strings.Contains(ref, "me") },
		},
	}
	tests := []struct {
		ref  string
		want outcome
	}{
		{refA, outcome{fail: true, reason: "Unauthorized", message: "exact"}},
		{"ok/me", outcome{}},
		{"quay.io/me", outcome{fail: true, reason: DefaultFailureReason, message: "first"}},
		{"docker.io/me", outcome{fail: true, reason: DefaultFailureReason, message: "second"}},
		{"docker.io/you", outcome{}},
	}
	for _, tc := range tests {
		if got := r.evaluate(tc.ref); got != tc.want {
			t.Errorf("evaluate(%q) = %+v, want %+v", tc.ref, got, tc.want)
		}
	}
	c := r.clone()
	r.exact[refA] = outcome{}
	r.matchers[1] = nil
	if got := c.evaluate(refA); !got.fail {
		t.Errorf("clone shares the exact map")
	}
	if got := c.evaluate("quay.io/x"); got.message != "first" {
		t.Errorf("clone shares the matchers: %+v", got)
	}
	if got := (rules{}).evaluate(refA); got.fail {
		t.Errorf("zero rules fail %q", refA)
	}
}

func TestReferenceHelpers(t *testing.T) {
	tests := []struct {
		ref, repo, tag string
	}{
		{"registry.example.com/org/ruby:3.3", "registry.example.com/org/ruby", "3.3"},
		{"registry.example.com:5000/org/ruby", "registry.example.com:5000/org/ruby", "latest"},
		{"registry.example.com:5000/org/ruby:1", "registry.example.com:5000/org/ruby", "1"},
		{"ruby", "ruby", "latest"},
		{"ruby:2", "ruby", "2"},
		{"quay.io/org/python@sha256:abcd", "quay.io/org/python", "latest"},
		{"quay.io/org/python:3@sha256:abcd", "quay.io/org/python", "3"},
	}
	for _, tc := range tests {
		if got := repository(tc.ref); got != tc.repo {
			t.Errorf("repository(%q) = %q, want %q", tc.ref, got, tc.repo)
		}
		if got := defaultTag(tc.ref); got != tc.tag {
			t.Errorf("defaultTag(%q) = %q, want %q", tc.ref, got, tc.tag)
		}
	}
	id := imageID(refA)
	if !strings.HasPrefix(id, "sha256:") || len(id) != len("sha256:")+64 || id != imageID(refA) || id == imageID(refB) {
		t.Errorf("imageID(%q) = %q", refA, id)
	}
	if got, want := pullSpec(refA), "registry.example.com/org/ruby@"+id; got != want {
		t.Errorf("pullSpec = %q, want %q", got, want)
	}
}

func TestImportRequests(t *testing.T) {
	isi := &imagev1.ImageStreamImport{Spec: imagev1.ImageStreamImportSpec{Import: true, Images: []imagev1.ImageImportSpec{
		{From: corev1.ObjectReference{Kind: kindDockerImage, Name: refA}, To: &corev1.LocalObjectReference{Name: "a"},
			ImportPolicy: imagev1.TagImportPolicy{Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}},
		{From: corev1.ObjectReference{Name: refB}, To: &corev1.LocalObjectReference{Name: "b"}},
		{From: corev1.ObjectReference{Kind: kindDockerImage, Name: refA}},
		{From: corev1.ObjectReference{Kind: kindDockerImage, Name: "x/y"}, To: &corev1.LocalObjectReference{}},
		{From: corev1.ObjectReference{Kind: kindImageStreamTag, Name: "ruby:1"}, To: &corev1.LocalObjectReference{Name: "c"}},
		{From: corev1.ObjectReference{Kind: kindDockerImage}, To: &corev1.LocalObjectReference{Name: "d"}},
	}}}
	want := map[string]string{"a": refA, "b": refB, "3.3": refA, "latest": "x/y"}
	refs, policies := importRequests(isi)
	if !equality.Semantic.DeepEqual(refs, want) {
		t.Errorf("importRequests refs = %v, want %v", refs, want)
	}
	wantPolicies := map[string]imagev1.TagImportPolicy{
		"a": {Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}, "b": {}, "3.3": {}, "latest": {},
	}
	if !equality.Semantic.DeepEqual(policies, wantPolicies) {
		t.Errorf("importRequests policies = %v, want %v", policies, wantPolicies)
	}
}
