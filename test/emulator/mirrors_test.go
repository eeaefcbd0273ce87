package emulator

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

func TestJudgeTriesTheMirrorsAsTheServerDoes(t *testing.T) {
	const (
		src    = "registry.redhat.io/ubi9/python-312:latest"
		first  = "one.example/rh/ubi9/python-312:latest"
		second = "two.example/rh/ubi9/python-312:latest"
	)
	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
		{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"one.example/rh", "two.example/rh"}},
	}}}}}
	unreachable := internalErrorPrefix + src + `: Get "https://registry.redhat.io/v2/": proxyconnect tcp: dial tcp 127.0.0.1:9: connect: connection refused`
	notFound := func(ref string) string { return `dockerimage.image.openshift.io "` + ref + `" not found` }
	for _, tc := range []struct {
		name        string
		rules       map[string]outcome
		wantFail    bool
		wantReason  string
		wantMessage string
	}{
		{"the second mirror has it", map[string]outcome{
			first: {fail: true, reason: "NotFound", message: notFound(first)},
		}, false, "", ""},
		{"no mirror has it and the source cannot be reached", map[string]outcome{
			first:  {fail: true, reason: "NotFound", message: notFound(first)},
			second: {fail: true, reason: "NotFound", message: notFound(second)},
			src:    {fail: true, reason: internalErrorReason, message: unreachable},
		}, true, internalErrorReason, internalErrorPrefix + "[" + notFound(first) + ", " + notFound(second) + ", " + src +
			`: Get "https://registry.redhat.io/v2/": proxyconnect tcp: dial tcp 127.0.0.1:9: connect: connection refused]`},
		{"the same failure everywhere is said once, without brackets", map[string]outcome{
			first:  {fail: true, reason: "Unauthorized", message: "unauthorized"},
			second: {fail: true, reason: "Unauthorized", message: "unauthorized"},
			src:    {fail: true, reason: "Unauthorized", message: "unauthorized"},
		}, true, internalErrorReason, internalErrorPrefix + "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rules{exact: tc.rules, pullSources: pullSources(mirrorsets.NewResolver(sets))}
			o := r.judge(src)
			if o.fail != tc.wantFail || o.reason != tc.wantReason || o.message != tc.wantMessage {
				t.Errorf("judge = %+v, want fail=%v %s %q", o, tc.wantFail, tc.wantReason, tc.wantMessage)
			}
		})
	}
	// A reference no mirror set covers keeps its rule's own reason and message.
	r := rules{exact: map[string]outcome{"quay.io/org/app:1": {fail: true, reason: "NotFound", message: "manifest unknown"}}, pullSources: pullSources(mirrorsets.NewResolver(sets))}
	if o := r.judge("quay.io/org/app:1"); o.reason != "NotFound" || o.message != "manifest unknown" {
		t.Errorf("an unmirrored reference: %+v", o)
	}
}
