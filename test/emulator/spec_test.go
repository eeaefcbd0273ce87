package emulator

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// What an import writes into the spec and annotations, case by case, as openshift-apiserver's
// ImageStreamImport handler does.
func TestSpecAfterImport(t *testing.T) {
	stamp := t1.UTC().Format("2006-01-02T15:04:05Z07:00")
	preserve := imagev1.TagImportPolicy{Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}
	withPolicy := func(tag imagev1.TagReference, p imagev1.TagImportPolicy) imagev1.TagReference {
		tag.ImportPolicy = p
		return tag
	}
	withRefPolicy := func(tag imagev1.TagReference, p imagev1.TagReferencePolicyType) imagev1.TagReference {
		tag.ReferencePolicy.Type = p
		return tag
	}
	// annotated is a stream an import has stamped and given its status repository.
	annotated := func(s *imagev1.ImageStream, at string) *imagev1.ImageStream {
		s.Annotations = map[string]string{imagev1.DockerImageRepositoryCheckAnnotation: at}
		s.Status.DockerImageRepository = repo
		return s
	}
	tests := []struct {
		name     string
		stream   *imagev1.ImageStream
		rules    rules
		requests map[string]string
		policies map[string]imagev1.TagImportPolicy
		// wantTags is the spec written; nil with wantStamp false: nothing written.
		wantTags  []imagev1.TagReference
		wantStamp bool
	}{{
		name:      "first import: the tag is reset to its source and the stream stamped",
		stream:    stream(1, []imagev1.TagReference{withRefPolicy(withGen(docker("3.3", refA), 1), imagev1.LocalTagReferencePolicy)}),
		wantTags:  []imagev1.TagReference{withRefPolicy(withGen(docker("3.3", refA), 0), imagev1.LocalTagReferencePolicy)},
		wantStamp: true,
	}, {
		name:   "imported already, nothing new: no write",
		stream: annotated(stream(2, []imagev1.TagReference{withGen(docker("3.3", refA), 2)}, entry("3.3", events(ok(refA, t0, 2)))), "x"),
		// A requested re-import of the same image at the same generation changes nothing.
		requests: map[string]string{"3.3": refA},
	}, {
		name:      "first failure: generation 0, for the strategy to bump",
		stream:    stream(1, []imagev1.TagReference{withGen(docker("3.3", refA), 1)}),
		rules:     failRules(refA, "not found"),
		wantTags:  []imagev1.TagReference{withRefPolicy(withGen(docker("3.3", refA), 0), "")},
		wantStamp: true,
	}, {
		name: "the same failure again: the spec stays",
		stream: annotated(stream(2, []imagev1.TagReference{withGen(docker("3.3", refA), 2)},
			entry("3.3", nil, failed(DefaultFailureReason, "not found", t0, 2))), "x"),
		rules:    failRules(refA, "not found"),
		requests: map[string]string{"3.3": refA},
	}, {
		name: "a retry asking with another import policy rewrites the tag's",
		stream: annotated(stream(2, []imagev1.TagReference{withPolicy(withGen(docker("3.3", refA), 2), preserve)},
			entry("3.3", events(ok(refA, t0, 2)))), "x"),
		requests:  map[string]string{"3.3": refA},
		policies:  map[string]imagev1.TagImportPolicy{"3.3": {}},
		wantTags:  []imagev1.TagReference{withGen(docker("3.3", refA), 2)},
		wantStamp: true,
	}, {
		name: "a retry asking with the tag's own policy changes nothing",
		stream: annotated(stream(2, []imagev1.TagReference{withPolicy(withGen(docker("3.3", refA), 2), preserve)},
			entry("3.3", events(ok(refA, t0, 2)))), "x"),
		requests: map[string]string{"3.3": refA},
		policies: map[string]imagev1.TagImportPolicy{"3.3": preserve},
	}, {
		name:   "no import at all",
		stream: stream(1, []imagev1.TagReference{istag("latest", "3.3")}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.stream.DeepCopy()
			res := importedStatus(tc.stream, tc.rules, t1, nil, tc.requests)
			got := specAfterImport(tc.stream, res, tc.policies, t1)
			if !equality.Semantic.DeepEqual(before, tc.stream) {
				t.Fatal("the stream passed in was modified")
			}
			if tc.wantTags == nil && !tc.wantStamp {
				if got != nil {
					t.Fatalf("wrote %+v, want no write", got.Spec.Tags)
				}
				return
			}
			if got == nil {
				t.Fatal("no write, want one")
			}
			if !equality.Semantic.DeepEqual(got.Spec.Tags, tc.wantTags) {
				t.Errorf("spec tags\n got %+v\nwant %+v", got.Spec.Tags, tc.wantTags)
			}
			if at := got.Annotations[imagev1.DockerImageRepositoryCheckAnnotation]; tc.wantStamp && at != stamp {
				t.Errorf("dockerRepositoryCheck = %q, want %q", at, stamp)
			}
		})
	}
}

// A reset keeps what the import does not own: the tag's annotations, its reference policy,
// and "reference".
func TestSpecAfterImportResetKeepsTheRestOfTheTag(t *testing.T) {
	tag := withGen(docker("3.3", refA), 1)
	tag.Annotations = map[string]string{"description": "Ruby 3.3"}
	tag.From.Namespace = "ignored-for-docker-images"
	s := stream(1, []imagev1.TagReference{tag})
	got := specAfterImport(s, importedStatus(s, rules{}, t1, nil, nil), nil, t1)
	if got == nil {
		t.Fatal("no write")
	}
	want := tag.DeepCopy()
	want.From = &corev1.ObjectReference{Kind: kindDockerImage, Name: refA}
	want.Generation = ptrTo(int64(0))
	want.ReferencePolicy.Type = imagev1.SourceTagReferencePolicy
	if !equality.Semantic.DeepEqual(got.Spec.Tags[0], *want) {
		t.Errorf("tag\n got %+v\nwant %+v", got.Spec.Tags[0], *want)
	}
}
