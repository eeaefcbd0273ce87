package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/operator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplereport"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// Rule 3 of issue 50 on the real openshift-apiserver: a tag whose image is for none of the nodes'
// architectures is hidden, one whose manifest list lacks some is named partial, and a node of the
// missing architecture brings the hidden one back. The images are built here, each config naming
// its platform, and pushed to a registry on loopback that the real server imports from; the
// nodes are Node objects the test writes, as a kubelet reports its architecture in
// status.nodeInfo.
//
// The stand-ins cannot show this: they serve no images.image.openshift.io (the import emulator
// writes the streams' status, not Image objects), so the operator reads no image's
// architectures there and judges no tag by them.

// archStream is the test inventory's one imagestream, and its tags.
const (
	archStream = "multiarch"
	// archS390x is a single image for s390x, imported as it is (Legacy).
	archS390x = "s390x"
	// archAMD64List is a manifest list with one manifest, for amd64, kept whole (PreserveOriginal).
	archAMD64List = "amd64-list"
	// archBothList is a manifest list for amd64 and arm64/v8, kept whole.
	archBothList = "amd64-arm64-list"
)

// loopbackRef parses ref and refuses one that is not on a loopback registry.
func loopbackRef(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return nil, err
	}
	if host := r.Context().RegistryStr(); !strings.HasPrefix(host, "127.0.0.1:") {
		return nil, fmt.Errorf("refusing to push %s: the tests never reach beyond loopback", ref)
	}
	return r, nil
}

// imageFor is a new single-layer image (Docker schema 2) whose config names linux and arch.
func imageFor(arch string) (v1.Image, error) {
	img, err := random.Image(256, 1)
	if err != nil {
		return nil, err
	}
	config, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	config.Architecture, config.OS = arch, "linux"
	return mutate.ConfigFile(img, config)
}

// pushImageFor pushes a new image for arch under ref and returns its manifest digest.
func pushImageFor(ref, arch string) (string, error) {
	r, err := loopbackRef(ref)
	if err != nil {
		return "", err
	}
	img, err := imageFor(arch)
	if err != nil {
		return "", err
	}
	if err := remote.Write(r, img, remote.WithTransport(registryTransport)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	return d.String(), err
}

// pushManifestListFor pushes under ref a Docker manifest list with a new image for each
// platform ("arm64/v8" names a variant), each image's config naming its platform as its
// manifest's entry does, and returns the list's digest.
func pushManifestListFor(ref string, platforms ...string) (string, error) {
	r, err := loopbackRef(ref)
	if err != nil {
		return "", err
	}
	list := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	for _, p := range platforms {
		arch, variant, _ := strings.Cut(p, "/")
		img, err := imageFor(arch)
		if err != nil {
			return "", err
		}
		if variant != "" {
			config, err := img.ConfigFile()
			if err != nil {
				return "", err
			}
			config.Variant = variant
			if img, err = mutate.ConfigFile(img, config); err != nil {
				return "", err
			}
		}
		list = mutate.AppendManifests(list, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch, Variant: variant}},
		})
	}
	if err := remote.WriteIndex(r, list, remote.WithTransport(registryTransport)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := list.Digest()
	return d.String(), err
}

// writeArchInventory writes an inventory of one imagestream whose tags name the images pushed
// to registry, and returns its directory.
func writeArchInventory(t *testing.T, registry string) (string, *inventory.Inventory) {
	t.Helper()
	tag := func(name string, mode imagev1.ImportModeType) imagev1.TagReference {
		return imagev1.TagReference{
			Name: name,
			Annotations: map[string]string{
				"openshift.io/display-name": "Multi-architecture sample " + name,
				"tags":                      "builder,multiarch",
			},
			From:            &corev1.ObjectReference{Kind: "DockerImage", Name: registry + "/samples/multiarch:" + name},
			ImportPolicy:    imagev1.TagImportPolicy{ImportMode: mode},
			ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
		}
	}
	is := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: archStream, Annotations: map[string]string{"openshift.io/display-name": "Multi-architecture sample"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			tag(archS390x, ""),
			tag(archAMD64List, imagev1.ImportModePreserveOriginal),
			tag(archBothList, imagev1.ImportModePreserveOriginal),
		}},
	}
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, inventory.ArchDirOCPX86_64, archStream, "imagestreams", archStream+".json"), is, "ImageStream", "image.openshift.io/v1")
	inv, err := inventory.LoadDir(dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	return dir, inv
}

// createNode writes a Node as a kubelet registers one: the object, then its status with the
// architecture it runs on.
func (e *env) createNode(t *testing.T, name, arch string) {
	t.Helper()
	ctx := context.Background()
	node, err := e.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	node.Status.NodeInfo = corev1.NodeSystemInfo{Architecture: arch, OperatingSystem: "linux", KubeletVersion: "v1.34.0"}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := e.kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of node %s: %v", name, err)
	}
}

// tagMarks are what the operator wrote on one spec tag: its unusable annotation ("" when none)
// and whether the console's tags annotation hides it.
func tagMarks(is *imagev1.ImageStream, tag string) (unusable string, hidden bool) {
	for _, t := range is.Spec.Tags {
		if t.Name != tag {
			continue
		}
		for _, word := range strings.Split(t.Annotations["tags"], ",") {
			hidden = hidden || strings.TrimSpace(word) == "hidden"
		}
		return t.Annotations[desired.UnusableAnnotation], hidden
	}
	return "", false
}

// refuseImageReads takes from the operator's ClusterRole its rule to read images, as RBAC an
// admin trimmed or a payload that does not grant it, until the func it returns gives the rule
// back; each waits until the operator's access is so. The refusals meanwhile are expected.
func (e *env) refuseImageReads(t *testing.T) (restore func()) {
	t.Helper()
	ctx := context.Background()
	e.optionalForbiddenBefore = time.Now().Add(24 * time.Hour)
	readImages := authorizationv1.ResourceAttributes{Verb: "get", Group: "image.openshift.io", Resource: "images", Name: "sha256:x"}
	role, err := e.kube.RbacV1().ClusterRoles().Get(ctx, "cluster-samples-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	granted := role.DeepCopy()
	role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, "images") && slices.Contains(r.APIGroups, "image.openshift.io")
	})
	if _, err := e.kube.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		return !operatorMay(t, e.kube, readImages), "the operator may still read images"
	})
	return func() {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := e.kube.RbacV1().ClusterRoles().Get(ctx, granted.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			current.Rules = granted.Rules
			_, err = e.kube.RbacV1().ClusterRoles().Update(ctx, current, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() (bool, string) {
			return operatorMay(t, e.kube, readImages), "the operator may not read images yet"
		})
	}
}

// samplesExistMessage is the Config's SamplesExist message.
func (e *env) samplesExistMessage() string {
	if c := configCondition(e.getConfig(), samplesv1.SamplesExist); c != nil {
		return c.Message
	}
	return ""
}

// startArchSamples pushes an s390x image, a manifest list for amd64 and one for amd64 and
// arm64 to a test registry, creates an amd64 and an arm64 node, and runs the operator over an
// inventory of one stream of three tags naming them, until every tag has imported its image; it
// returns the images' digests by tag.
func startArchSamples(t *testing.T) (e *env, op *runningOperator, opts operator.Options, digests map[string]string) {
	t.Helper()
	e, registry := newEnvRealImports(t)
	digests = map[string]string{}
	var err error
	ref := func(tag string) string { return registry + "/samples/multiarch:" + tag }
	if digests[archS390x], err = pushImageFor(ref(archS390x), "s390x"); err != nil {
		t.Fatal(err)
	}
	if digests[archAMD64List], err = pushManifestListFor(ref(archAMD64List), "amd64"); err != nil {
		t.Fatal(err)
	}
	if digests[archBothList], err = pushManifestListFor(ref(archBothList), "amd64", "arm64/v8"); err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed to %s: %v", registry, digests)

	e.createNode(t, "node-amd64", "amd64")
	e.createNode(t, "node-arm64", "arm64")

	dir, inv := writeArchInventory(t, registry)
	opts = defaultOptions()
	opts.InventoryDir = dir
	opts.ImportRetryInterval = 3 * time.Second
	op = e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	// Every tag imports its image: the s390x image as it is, the lists whole.
	eventually(t, 60*time.Second, func() (bool, string) {
		is := e.imageStream(archStream)
		for tag, want := range digests {
			if got := importedImage(is, tag); got != want {
				return false, fmt.Sprintf("%s:%s has image %q, want %s; status %+v", archStream, tag, got, want, is.Status.Tags)
			}
		}
		return true, ""
	})
	return e, op, opts, digests
}

// TestATagForNoNodeArchitectureIsHiddenAndComesBackWithANode: with nodes for amd64 and arm64, a
// tag whose image is for s390x alone is annotated unusable and hidden, a tag whose manifest list
// has amd64 alone is named partial (none for arm64) in SamplesExist and stays offered, a list for
// both is neither; a node for s390x brings the first tag back within 15 s of its creation.
func TestATagForNoNodeArchitectureIsHiddenAndComesBackWithANode(t *testing.T) {
	parallel(t, aboutAMinute)
	e, _, _, digests := startArchSamples(t)
	ctx := context.Background()

	// What the real server recorded of each image is what the operator judges by.
	wantArchs := map[string][]string{archS390x: {"s390x"}, archAMD64List: {"amd64"}, archBothList: {"amd64", "arm64/v8"}}
	for tag, digest := range digests {
		img, err := e.images.ImageV1().Images().Get(ctx, digest, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading image %s of %s:%s: %v", digest, archStream, tag, err)
		}
		if got := usability.ArchitecturesOf(img); !slices.Equal(got, wantArchs[tag]) {
			t.Fatalf("the server's image %s of %s:%s has architectures %v, want %v: dockerImageManifests %+v, dockerImageMetadata %s",
				digest, archStream, tag, got, wantArchs[tag], img.DockerImageManifests, img.DockerImageMetadata.Raw)
		}
	}

	// amd64 and arm64 nodes: the s390x tag is hidden and says why; the amd64 list is partial,
	// named so in SamplesExist, and offered; the list for both is neither.
	const hiddenWhy = "no image for node architectures amd64, arm64 (image for s390x)"
	partialAMD64 := fmt.Sprintf("imagestreamtag/%s:%s (none for arm64)", archStream, archAMD64List)
	eventually(t, 30*time.Second, func() (bool, string) {
		is := e.imageStream(archStream)
		why, hidden := tagMarks(is, archS390x)
		if why != hiddenWhy || !hidden {
			return false, fmt.Sprintf("%s:%s unusable %q hidden %v, want %q hidden", archStream, archS390x, why, hidden, hiddenWhy)
		}
		for _, tag := range []string{archAMD64List, archBothList} {
			if why, hidden := tagMarks(is, tag); why != "" || hidden {
				return false, fmt.Sprintf("%s:%s unusable %q hidden %v, want it offered", archStream, tag, why, hidden)
			}
		}
		msg := e.samplesExistMessage()
		return strings.Contains(msg, fmt.Sprintf("imagestreamtag/%s:%s (%s)", archStream, archS390x, hiddenWhy)) &&
			strings.Contains(msg, partialAMD64) && !strings.Contains(msg, archBothList), fmt.Sprintf("SamplesExist: %q", msg)
	})
	if told := e.eventsWithReason(t, usability.NoImageForNodes); len(told) != 1 || !strings.Contains(told[0], archStream+":"+archS390x) {
		t.Errorf("want one %s event naming %s:%s, got %q", usability.NoImageForNodes, archStream, archS390x, told)
	}

	// A node for s390x joins: the tag's marks go, and every tag is partial now.
	created := time.Now()
	e.createNode(t, "node-s390x", "s390x")
	eventuallyEvery(t, 15*time.Second, 50*time.Millisecond, func() (bool, string) {
		why, hidden := tagMarks(e.imageStream(archStream), archS390x)
		return why == "" && !hidden, fmt.Sprintf("%s:%s unusable %q hidden %v", archStream, archS390x, why, hidden)
	})
	took := time.Since(created)
	t.Logf("%s:%s offered again %s after the s390x node was created", archStream, archS390x, took.Round(10*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("%s:%s came back %s after the node was created, want within 15 s", archStream, archS390x, took.Round(10*time.Millisecond))
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		msg := e.samplesExistMessage()
		for _, want := range []string{
			fmt.Sprintf("imagestreamtag/%s:%s (none for amd64, arm64)", archStream, archS390x),
			fmt.Sprintf("imagestreamtag/%s:%s (none for arm64, s390x)", archStream, archAMD64List),
			fmt.Sprintf("imagestreamtag/%s:%s (none for s390x)", archStream, archBothList),
		} {
			if !strings.Contains(msg, want) {
				return false, fmt.Sprintf("SamplesExist %q does not name %s", msg, want)
			}
		}
		return !strings.Contains(msg, "cannot work on this cluster"), fmt.Sprintf("SamplesExist still names unusable samples: %q", msg)
	})
	is := e.imageStream(archStream)
	for _, tag := range []string{archAMD64List, archBothList} {
		if why, hidden := tagMarks(is, tag); why != "" || hidden {
			t.Errorf("%s:%s unusable %q hidden %v after the s390x node joined, want it offered", archStream, tag, why, hidden)
		}
	}
	if back := e.eventsWithReason(t, "SamplesUsableAgain"); len(back) != 1 || !strings.Contains(back[0], archStream+":"+archS390x) {
		t.Errorf("want one SamplesUsableAgain event naming %s:%s, got %q", archStream, archS390x, back)
	}
}

// TestARestartWhileTheImagesCannotBeReadChangesNoMark (issue 56, item 10): the s390x tag is
// marked unusable on the amd64 and arm64 nodes; the operator restarts while it cannot read the
// images (its reads refused, as when openshift-apiserver cannot answer them): the restarted
// operator writes no sample, the mark stays as it was, and once the reads succeed again the
// verdict they give is the same, still without a write. Before, the restart unmarked the tag
// and the reads marked it again.
func TestARestartWhileTheImagesCannotBeReadChangesNoMark(t *testing.T) {
	parallel(t, aboutAMinute)
	e, op, opts, _ := startArchSamples(t)
	const why = "no image for node architectures amd64, arm64 (image for s390x)"
	eventually(t, 30*time.Second, func() (bool, string) {
		got, hidden := tagMarks(e.imageStream(archStream), archS390x)
		return got == why && hidden, fmt.Sprintf("%s:%s unusable %q hidden %v, want %q hidden", archStream, archS390x, got, hidden, why)
	})
	e.waitQuiet(t, time.Second)

	mayReadImages := e.refuseImageReads(t)
	op.stop(t)
	restarted := time.Now()
	e.startOperator(opts)
	eventually(t, 30*time.Second, func() (bool, string) {
		refused := e.operatorRequests(t, verb("get"), on("images"), answered(403), receivedAfter(restarted))
		return len(refused) > 0, "the restarted operator has not tried to read an image yet"
	})
	// The first verdicts are made at that read; their writes would follow within a second.
	idle(t, 5*time.Second)
	check := func(when string) {
		t.Helper()
		if got, hidden := tagMarks(e.imageStream(archStream), archS390x); got != why || !hidden {
			t.Errorf("%s: %s:%s unusable %q hidden %v, want %q hidden as before the restart", when, archStream, archS390x, got, hidden, why)
		}
		if w := e.sampleWritesSince(t, restarted); len(w) > 0 {
			t.Errorf("%s: the restarted operator wrote %d times: %q", when, len(w), w)
		} else {
			t.Logf("%s: no sample written since the restart", when)
		}
	}
	check("image reads refused")

	readBack := time.Now()
	mayReadImages()
	eventually(t, 60*time.Second, func() (bool, string) {
		read := e.operatorRequests(t, verb("get"), on("images"), answered(200), receivedAfter(readBack))
		return len(read) > 0, "the restarted operator has not read an image since it may again"
	})
	idle(t, 5*time.Second)
	check("the images read again")
}

// TestEveryImportedTagIsJudgedWithin15sOfTheNodesTurningArm64 (issue 56, item 6): the whole
// x86_64 inventory imports its amd64 images from a mirror while an amd64 node runs and the
// operator may not read images (RBAC trimmed, as during an update from a payload that does not
// grant it): its reads are refused and put off. Read access comes back, the nodes turn arm64
// only, and every imported tag is marked unusable within 15 s, whatever the reads met before
// (whole streams were left unjudged a minute later while a failed read put them off for 30 s
// to 5 minutes).
func TestEveryImportedTagIsJudgedWithin15sOfTheNodesTurningArm64(t *testing.T) {
	parallel(t, aboutAMinute)
	e, registry := newEnvRealImports(t)
	ctx := context.Background()
	e.createNode(t, "node-amd64", "amd64")
	inv := x86Inventory(t)
	opts := defaultOptions()
	opts.ImportRetryInterval = 3 * time.Second
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")

	// The operator may no longer read images.
	mayReadImages := e.refuseImageReads(t)

	before := e.dockerImageTags(t)
	refs := map[string]bool{}
	for _, tags := range before {
		for _, ref := range tags {
			refs[onRegistry(ref, registry)] = true
		}
	}
	mirrored := pushAll(t, slices.Sorted(maps.Keys(refs)))
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SamplesRegistry = registry })
	streams := slices.Collect(maps.Keys(before))
	eventuallyEvery(t, 120*time.Second, time.Second, func() (bool, string) {
		pending := e.tagsNotImported(streams, func(stream, tag string) string {
			return mirrored[onRegistry(before[stream][tag], registry)]
		})
		return len(pending) == 0, fmt.Sprintf("%d tags not imported from the mirror yet, e.g. %.400v", len(pending), pending)
	})
	// Two rounds of refused reads, 30 s apart: the reads are put off for a minute now.
	eventuallyEvery(t, 90*time.Second, time.Second, func() (bool, string) {
		refused := e.operatorRequests(t, verb("get"), on("images"), answered(403))
		if len(refused) == 0 {
			return false, "no refused image read yet"
		}
		span := refused[len(refused)-1].Received.Sub(refused[0].Received)
		return span >= 25*time.Second, fmt.Sprintf("%d refused image reads over %s", len(refused), span)
	})
	mayReadImages()

	// The nodes turn arm64 only.
	changed := time.Now()
	e.createNode(t, "node-arm64", "arm64")
	if err := e.kube.CoreV1().Nodes().Delete(ctx, "node-amd64", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const why = "no image for node architecture arm64 (image for amd64)"
	var imported int
	unjudged := func() []string {
		var out []string
		imported = 0
		for stream, tags := range before {
			is := e.imageStream(stream)
			for tag := range tags {
				if importedImage(is, tag) == "" {
					continue
				}
				imported++
				if got, hidden := tagMarks(is, tag); got != why || !hidden {
					out = append(out, stream+":"+tag)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	var left []string
	for {
		left = unjudged()
		if len(left) == 0 || time.Since(changed) > 60*time.Second {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := time.Since(changed)
	if len(left) > 0 {
		t.Fatalf("%d of %d imported tags still without a verdict %s after the nodes turned arm64: %v", len(left), imported, took.Round(100*time.Millisecond), left)
	}
	t.Logf("all %d imported tags marked unusable %s after the nodes turned arm64", imported, took.Round(100*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("every imported tag judged %s after the nodes turned arm64, want within 15 s", took.Round(100*time.Millisecond))
	}
}

// unmarked is a stream's labels, annotations and spec without the operator's marks (each tag's
// unusable annotation, and "hidden" on a tag that is not retired), nor what the server keeps
// (the tags' generations, the stamp of the last import): what a marks-only update leaves as it
// was.
func unmarked(t *testing.T, is *imagev1.ImageStream) string {
	t.Helper()
	out := is.DeepCopy()
	delete(out.Annotations, "openshift.io/image.dockerRepositoryCheck")
	for i := range out.Spec.Tags {
		tag := &out.Spec.Tags[i]
		tag.Generation = nil
		delete(tag.Annotations, desired.UnusableAnnotation)
		if !desired.IsRetiredTag(*tag) {
			tag.Annotations["tags"] = strings.Join(slices.DeleteFunc(strings.Split(tag.Annotations["tags"], ","),
				func(w string) bool { return strings.TrimSpace(w) == "hidden" }), ",")
		}
	}
	data, err := json.Marshal([]any{out.Labels, out.Annotations, out.Spec})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestAdminAndRetiredTagsGetTheirArchitectureMarks (issue 56, item 7, on the real server): the
// operator's verdict on a tag it does not ship reaches the tag, as it does for its own. With
// amd64 and arm64 nodes, a tag an admin adds to the managed stream, whose image is for ppc64le,
// is marked unusable and hidden, and `oc samples status` says why; a ppc64le node takes the mark
// away, the admin's tags annotation as the admin wrote it. An upgrade retires the s390x tag
// while an s390x node runs (no mark); the node goes, and the retired tag is marked:
// `oc samples status` shows it both retired and unusable; the node comes back and the mark goes,
// the tag still hidden by its retirement. Each change is one update that writes nothing but
// marks: the admin's tag and the retired tag keep their content.
func TestAdminAndRetiredTagsGetTheirArchitectureMarks(t *testing.T) {
	parallel(t, aboutAMinute)
	e, op, opts, _ := startArchSamples(t)
	ctx := context.Background()
	from := e.imageStream(archStream).Spec.Tags[0].From.Name
	registry := from[:strings.Index(from, "/samples/")]

	// markedOnce waits until check holds, and then for the operator to be quiet, and checks that
	// it wrote the stream once since before, changing nothing of it but marks.
	markedOnce := func(when string, before *imagev1.ImageStream, since time.Time, check func(*imagev1.ImageStream) (bool, string)) {
		t.Helper()
		eventually(t, 30*time.Second, func() (bool, string) { return check(e.imageStream(archStream)) })
		e.waitQuiet(t, 2*time.Second)
		if w := e.sampleWritesSince(t, since); !slices.Equal(w, []string{"update imagestreams/" + archStream}) {
			t.Errorf("%s: the operator wrote %q; want one update of %s", when, w, archStream)
		}
		if was, is := unmarked(t, before), unmarked(t, e.imageStream(archStream)); was != is {
			t.Errorf("%s: the operator changed more than marks:\nbefore %s\nafter  %s", when, was, is)
		}
	}
	statusJSON := func() samplereport.Sample {
		t.Helper()
		r := e.kubectlSamplesQuiet("status", "-o", "json")
		var report samplereport.Report
		if err := json.Unmarshal([]byte(r.out), &report); err != nil {
			t.Fatalf("oc samples status -o json: %v\n%s%s", err, r.out, r.errOut)
		}
		for _, s := range report.Samples {
			if s.Kind == samplereport.KindImageStream && s.Name == archStream {
				return s
			}
		}
		t.Fatalf("oc samples status -o json names no %s:\n%s", archStream, r.out)
		return samplereport.Sample{}
	}
	tagOf := func(s samplereport.Sample, name string) samplereport.Tag {
		for _, tag := range s.Tags {
			if tag.Name == name {
				return tag
			}
		}
		t.Fatalf("oc samples status names no tag %s of %s: %+v", name, archStream, s.Tags)
		return samplereport.Tag{}
	}
	// wideRow is the line of `oc samples status -o wide` for one tag of the stream.
	wideRow := func(tag string) string {
		t.Helper()
		r := e.kubectlSamplesQuiet("status", "-o", "wide")
		for _, line := range strings.Split(r.out, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == "imagestream" && f[1] == archStream && f[2] == tag {
				return line
			}
		}
		t.Fatalf("oc samples status -o wide has no row for %s:%s:\n%s%s", archStream, tag, r.out, r.errOut)
		return ""
	}

	// (a) An admin adds a tag for ppc64le to the managed stream.
	const adminTag = "admin-ppc64le"
	digest, err := pushImageFor(registry+"/samples/multiarch:ppc64le", "ppc64le")
	if err != nil {
		t.Fatal(err)
	}
	e.waitQuiet(t, time.Second)
	added := time.Now()
	admins := e.editImageStream(archStream, func(is *imagev1.ImageStream) {
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{
			Name:        adminTag,
			Annotations: map[string]string{"tags": "builder", "description": "the admin's own"},
			From:        &corev1.ObjectReference{Kind: "DockerImage", Name: registry + "/samples/multiarch:ppc64le"},
		})
	})
	const adminWhy = "no image for node architectures amd64, arm64 (image for ppc64le)"
	markedOnce("the admin's tag judged", admins, added, func(is *imagev1.ImageStream) (bool, string) {
		why, hidden := tagMarks(is, adminTag)
		return importedImage(is, adminTag) == digest && why == adminWhy && hidden,
			fmt.Sprintf("%s:%s image %q unusable %q hidden %v; want %s, %q hidden", archStream, adminTag, importedImage(is, adminTag), why, hidden, digest, adminWhy)
	})
	if got := tagOf(statusJSON(), adminTag); got.Unusable != adminWhy {
		t.Errorf("oc samples status -o json: %s:%s %+v; want unusable %q", archStream, adminTag, got, adminWhy)
	}
	if row := wideRow(adminTag); !strings.Contains(row, adminWhy) {
		t.Errorf("oc samples status -o wide: %q; want it unusable: %s", row, adminWhy)
	}

	// A ppc64le node joins: the admin's tag's mark goes, its tags as the admin wrote them.
	before := e.imageStream(archStream)
	joined := time.Now()
	e.createNode(t, "node-ppc64le", "ppc64le")
	markedOnce("a ppc64le node joined", before, joined, func(is *imagev1.ImageStream) (bool, string) {
		for _, tag := range is.Spec.Tags {
			if tag.Name == adminTag {
				_, marked := tag.Annotations[desired.UnusableAnnotation]
				return !marked && tag.Annotations["tags"] == "builder", fmt.Sprintf("%s:%s annotations %v; want the admin's", archStream, adminTag, tag.Annotations)
			}
		}
		return false, fmt.Sprintf("the admin's %s:%s is gone", archStream, adminTag)
	})
	if got := tagOf(statusJSON(), adminTag); got.Unusable != "" {
		t.Errorf("oc samples status -o json: %s:%s %+v; want it usable", archStream, adminTag, got)
	}

	// (b) An s390x node joins; an upgrade to v2, whose inventory no longer has the s390x tag,
	// retires it unmarked.
	e.createNode(t, "node-s390x", "s390x")
	eventually(t, 30*time.Second, func() (bool, string) {
		why, hidden := tagMarks(e.imageStream(archStream), archS390x)
		return why == "" && !hidden, fmt.Sprintf("%s:%s unusable %q hidden %v", archStream, archS390x, why, hidden)
	})
	v2Dir, _ := writeArchInventory(t, registry)
	editInventoryStream(t, v2Dir, archStream, func(is *imagev1.ImageStream) {
		is.Spec.Tags = slices.DeleteFunc(is.Spec.Tags, func(tag imagev1.TagReference) bool { return tag.Name == archS390x })
	})
	v2, err := inventory.LoadDir(v2Dir, inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	op.stop(t)
	opts.Version, opts.InventoryDir = "v2", v2Dir
	e.startOperator(opts)
	e.waitManaged(t, v2, "v2")
	eventually(t, 30*time.Second, func() (bool, string) {
		for _, tag := range e.imageStream(archStream).Spec.Tags {
			if tag.Name == archS390x {
				why, hidden := tagMarks(e.imageStream(archStream), archS390x)
				return tag.Annotations[desired.RetiredAnnotation] == "v2" && hidden && why == "",
					fmt.Sprintf("%s:%s annotations %v; want it retired in v2, hidden, unmarked", archStream, archS390x, tag.Annotations)
			}
		}
		return false, fmt.Sprintf("%s:%s is gone: a retired tag must stay", archStream, archS390x)
	})

	// The s390x node goes: the retired tag is marked, and shown retired and unusable.
	e.waitQuiet(t, time.Second)
	before = e.imageStream(archStream)
	gone := time.Now()
	if err := e.kube.CoreV1().Nodes().Delete(ctx, "node-s390x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const retiredWhy = "no image for node architectures amd64, arm64, ppc64le (image for s390x)"
	markedOnce("the s390x node went", before, gone, func(is *imagev1.ImageStream) (bool, string) {
		why, hidden := tagMarks(is, archS390x)
		return why == retiredWhy && hidden, fmt.Sprintf("retired %s:%s unusable %q hidden %v; want %q hidden", archStream, archS390x, why, hidden, retiredWhy)
	})
	if got := tagOf(statusJSON(), archS390x); got.State != samplereport.TagRetired || got.Reason != "retired in v2" || got.Unusable != retiredWhy {
		t.Errorf("oc samples status -o json: %s:%s %+v; want retired in v2 and unusable: %s", archStream, archS390x, got, retiredWhy)
	}
	if row := wideRow(archS390x); !strings.Contains(row, "retired in v2") || !strings.Contains(row, retiredWhy) {
		t.Errorf("oc samples status -o wide: %q; want it retired in v2 and unusable: %s", row, retiredWhy)
	}

	// The node comes back: the mark goes, the retired tag stays hidden.
	before = e.imageStream(archStream)
	back := time.Now()
	e.createNode(t, "node-s390x", "s390x")
	markedOnce("the s390x node came back", before, back, func(is *imagev1.ImageStream) (bool, string) {
		why, hidden := tagMarks(is, archS390x)
		return why == "" && hidden, fmt.Sprintf("retired %s:%s unusable %q hidden %v; want no mark, hidden", archStream, archS390x, why, hidden)
	})

	// Neither tag was put back to anything but what the admin and the retirement wrote.
	is := e.imageStream(archStream)
	for _, tag := range is.Spec.Tags {
		switch tag.Name {
		case adminTag:
			if tag.From.Name != registry+"/samples/multiarch:ppc64le" || tag.Annotations["description"] != "the admin's own" {
				t.Errorf("the admin's %s:%s was rewritten: %+v", archStream, adminTag, tag)
			}
		case archS390x:
			if tag.From.Name != registry+"/samples/multiarch:s390x" || tag.Annotations[desired.RetiredAnnotation] != "v2" {
				t.Errorf("the retired %s:%s was rewritten: %+v", archStream, archS390x, tag)
			}
		}
	}
	if reverted := e.eventsWithReason(t, "SampleReverted"); len(reverted) > 0 {
		t.Errorf("marking tags the inventory does not ship was reported as reverts: %q", reverted)
	}
}
