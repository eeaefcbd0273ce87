package usabilitycontrol

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// managedConfig is a Managed Config for x86_64 that skips the templates and streams given, and
// the tags of its skipped-tags annotation ("" for none).
func managedConfig(skippedTemplates, skippedStreams []string, skippedTags string) *samplesv1.Config {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed,
		Architectures: []string{"x86_64"}, SkippedTemplates: skippedTemplates, SkippedImagestreams: skippedStreams}}
	if skippedTags != "" {
		cfg.Annotations = map[string]string{configspec.SkippedImageStreamTagsAnnotation: skippedTags}
	}
	return cfg
}

// verdictOn is c's verdict on the sample of that kind and name, if there is one.
func verdictOn(c *Controller, kind, name string) (usability.Verdict, bool) {
	i := slices.IndexFunc(c.verdicts.All(), func(v usability.Verdict) bool { return v.Kind == kind && v.Name == name })
	if i < 0 {
		return usability.Verdict{}, false
	}
	return c.verdicts.All()[i], true
}

// TestATemplateTheConfigSkipsGetsNoVerdictAndTheOthersStillDo: the operator does not install a
// template the Config skips, so it is not judged (an Event would name a template the admin does
// not have); the templates after it are judged as ever.
func TestATemplateTheConfigSkipsGetsNoVerdictAndTheOthersStillDo(t *testing.T) {
	c := operatorOver(servingAllBut("apps.openshift.io"), managedConfig([]string{"dancer-mysql-example"}, nil, ""), nil)
	syncedEvents(t, c)
	if v, ok := verdictOn(c, usability.KindTemplate, "dancer-mysql-example"); ok {
		t.Errorf("a skipped template was judged: %v", v)
	}
	for _, name := range []string{"dancer-mysql-persistent", "django-psql-example", "sso76-ocp4-x509-postgresql-persistent"} {
		if _, ok := verdictOn(c, usability.KindTemplate, name); !ok {
			t.Errorf("%s, after the skipped template, has no verdict", name)
		}
	}
}

// TestATagTheConfigSkipsMarksTheTemplatesThatNameIt: a template whose build starts from a tag
// the Config's skipped-tags annotation leaves out cannot build here, and says why.
func TestATagTheConfigSkipsMarksTheTemplatesThatNameIt(t *testing.T) {
	c := operatorOver(servingAllBut(), managedConfig(nil, nil, "php:7.4-ubi8"), nil)
	syncedEvents(t, c)
	for _, name := range []string{"cakephp-mysql-example", "cakephp-mysql-persistent"} {
		v, _ := verdictOn(c, usability.KindTemplate, name)
		if !slices.Contains(v.Reasons, usability.Reason{Code: usability.ImageSkipped, Message: "image openshift/php:7.4-ubi8 is skipped by the Config"}) {
			t.Errorf("%s, whose build starts from the skipped php:7.4-ubi8: verdict %v, want it skipped", name, v)
		}
	}
}

// TestNoTemplateIsToldAnInstalledTagIsMissingBeforeItsStreamIsCreated: at an install the
// verdicts come before the streams exist; a template naming a tag the operator is creating must
// not be marked (and hidden) as naming a missing image for the moments that takes.
func TestNoTemplateIsToldAnInstalledTagIsMissingBeforeItsStreamIsCreated(t *testing.T) {
	c := syncableController(servingAllBut(), clocktesting.NewFakeClock(time.Now()))
	for range 2 {
		syncedEvents(t, c)
		if v, ok := verdictOn(c, usability.KindTemplate, "cakephp-mysql-example"); ok {
			t.Errorf("cakephp-mysql-example, naming php:7.4-ubi8 the operator installs, judged before php exists: %v", v)
		}
	}
}

// TestWhatTheOperatorInstallsLeavesOutWhatTheConfigSkips: usability.Cluster.Installing are the
// tags a template may name that are on their way; a tag the Config skips never comes.
func TestWhatTheOperatorInstallsLeavesOutWhatTheConfigSkips(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	every, php := 0, len(inv.TagNames("php"))
	for _, stream := range inv.ImageStreamNames() {
		every += len(inv.TagNames(stream))
	}
	c := syncableController(servingAllBut(), clocktesting.NewFakeClock(time.Now()))
	for _, tc := range []struct {
		name           string
		skippedStreams []string
		skippedTags    []string
		size           int
		in, out        []string
	}{
		{"nothing skipped", nil, nil, every, []string{"php:7.4-ubi8", "php:latest", "perl:latest"}, nil},
		{"a stream skipped", []string{"php"}, nil, every - php, []string{"perl:latest"}, []string{"php:7.4-ubi8", "php:latest"}},
		{"a tag skipped", nil, []string{"php:7.4-ubi8"}, every - 1, []string{"php:latest", "perl:latest"}, []string{"php:7.4-ubi8"}},
		{"both", []string{"php"}, []string{"perl:latest"}, every - php - 1, []string{"perl:5.40-ubi10"}, []string{"php:latest", "perl:latest"}},
	} {
		got := c.installing(inv, tc.skippedStreams, sets.New(tc.skippedTags...))
		if got.Len() != tc.size || !got.HasAll(tc.in...) || got.HasAny(tc.out...) {
			t.Errorf("%s: %d tags installed, want %d, among them %v and none of %v", tc.name, got.Len(), tc.size, tc.in, tc.out)
		}
	}
}

// A stream whose every tag the Config skips is created without tags: a template naming another
// tag of it reads "has no tag" before the stream is created as after.
func TestAStreamWhoseEveryTagIsSkippedIsStillInstalled(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	every := inv.ImageStreamNames()
	got := installingStreams(inv, []string{"php"})
	if got.Len() != len(every)-1 || got.Has("php") || !got.Has("perl") {
		t.Errorf("php skipped: %d streams installed, want %d, perl among them and not php", got.Len(), len(every)-1)
	}
	var perlTags []string
	for _, tag := range inv.TagNames("perl") {
		perlTags = append(perlTags, "perl:"+tag)
	}
	c := syncableController(servingAllBut(), clocktesting.NewFakeClock(time.Now()))
	if tags := c.installing(inv, nil, sets.New(perlTags...)); tags.HasAny(perlTags...) {
		t.Fatalf("every perl tag skipped, yet some are installed")
	}
	if got := installingStreams(inv, nil); !got.Has("perl") || got.Len() != len(every) {
		t.Errorf("every perl tag skipped: %d streams installed, want all %d, perl among them", got.Len(), len(every))
	}

	// The sync: a retired template names perl:5.30-ubi8, which the inventory lacks, before the
	// operator has created perl.
	c = operatorOver(servingAllBut(), managedConfig(nil, nil, strings.Join(perlTags, ",")), []*templatev1.Template{retiredTemplate("dancer-old", "true")})
	syncedEvents(t, c)
	v, _ := verdictOn(c, usability.KindTemplate, "dancer-old")
	want := usability.Reason{Code: usability.ImageMissing, Message: "image openshift/perl:5.30-ubi8 does not exist (image stream openshift/perl has no tag 5.30-ubi8)"}
	if !slices.Contains(v.Reasons, want) {
		t.Errorf("a template naming a tag perl lacks, perl not created yet: verdict %v, want %q", v, want.Message)
	}
}

// TestASyncComesBackOnlyWhenARecheckOrAnImageReadIsDue: a group found not served just after an
// APIService changed is read again a second later, an image whose read failed half a second
// later: a verdict that kube-apiserver catching up would change is not kept for long. When
// neither is due, nothing brings the sync back: each judges every sample.
func TestASyncComesBackOnlyWhenARecheckOrAnImageReadIsDue(t *testing.T) {
	busy := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	for _, tc := range []struct {
		name      string
		notServed []string
		fail      error
		want      []time.Duration
	}{
		{"every group served, every image read", nil, nil, nil},
		{"a group not served", []string{"apps.openshift.io"}, nil, []time.Duration{discoveryRecheck}},
		{"an image read failing", nil, busy, []time.Duration{imageRetry}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &answers{images: images{archs: map[string]string{"sha256:r1": "amd64"}}, fail: map[string]error{"sha256:r1": tc.fail}}
			j := newJudgedCluster(t, store, map[string][]string{"ruby": {"sha256:r1"}})
			disc := servingAllBut(tc.notServed...)
			disc.kinds["image.openshift.io/v1"] = append(disc.kinds["image.openshift.io/v1"], "Image")
			j.c.discovery = disc
			q := newQueueOf(t)
			if err := j.c.sync(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			if got := q.later(); !slices.Equal(got, tc.want) {
				t.Errorf("the sync brought back after %v, want %v", got, tc.want)
			}
			if q.Len() != 0 {
				t.Error("the sync brought back at once")
			}
		})
	}
}

// TestATagNotImportedYetDoesNotStopTheOthersBeingJudged: a stream's status lists a tag whose
// import has written no image yet, or wrote an event without one; the tags that have an image
// are judged all the same.
func TestATagNotImportedYetDoesNotStopTheOthersBeingJudged(t *testing.T) {
	streams := map[string][]string{"ruby": {"sha256:r1"}}
	store := &answers{images: images{archs: map[string]string{"sha256:r1": "amd64"}}}
	j := newJudgedCluster(t, store, streams)
	pending := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: names.SamplesNamespace, ResourceVersion: "1",
		Labels: map[string]string{desired.ManagedLabel: "true"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{Name: "3.12"}, {Name: "3.13"}}},
		Status: imagev1.ImageStreamStatus{Tags: []imagev1.NamedTagEventList{
			{Tag: "3.12"},
			{Tag: "3.13", Items: []imagev1.TagEvent{{}}},
		}}}
	_ = j.streams.Add(pending)
	j.nodes.OnAdd(node("node-arm64", "arm64"), false)
	j.nodes.OnDelete(node("node-amd64", "amd64"))
	j.sync(t)
	if left := j.unjudged(streams); len(left) != 0 {
		t.Errorf("unjudged %v beside a stream whose tags have no image yet", left)
	}
	if reads := store.took(); !slices.Equal(reads, []string{"sha256:r1"}) {
		t.Errorf("read %v, want ruby's image alone", reads)
	}
}

// TestAStreamTheOperatorDoesNotManageGetsNoVerdict: the samples namespace holds streams the
// operator does not manage (the payload's, one an admin took over), some still carrying a mark
// it wrote once. Their tags get no verdict, which would name them in an Event and hold a mark
// the samples controller never writes; and the operator's own streams around them are judged,
// sync after sync.
func TestAStreamTheOperatorDoesNotManageGetsNoVerdict(t *testing.T) {
	streams := map[string][]string{}
	store := &answers{images: images{archs: map[string]string{"sha256:theirs": "amd64"}}}
	for _, name := range []string{"nodejs", "perl", "python", "ruby"} {
		streams[name] = []string{"sha256:" + name}
		store.archs["sha256:"+name] = "amd64"
	}
	j := newJudgedCluster(t, store, streams)
	theirs := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "aaa-theirs", Namespace: names.SamplesNamespace, ResourceVersion: "1",
		Labels: map[string]string{desired.ManagedLabel: "false"}},
		Spec:   imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{Name: "1"}}},
		Status: imagev1.ImageStreamStatus{Tags: []imagev1.NamedTagEventList{{Tag: "1", Items: []imagev1.TagEvent{{Image: "sha256:theirs"}}}}}}
	desired.MarkImageStream(theirs, desired.Marks{"1": {Reason: "no image for node architecture arm64 (image for amd64)", Hide: true}})
	_ = j.streams.Add(theirs)
	j.nodes.OnAdd(node("node-arm64", "arm64"), false)
	j.nodes.OnDelete(node("node-amd64", "amd64"))
	// The streams are listed in no set order: several syncs see them in several.
	for i := range 10 {
		j.sync(t)
		if v, ok := verdictOn(j.c, usability.KindImageStreamTag, "aaa-theirs:1"); ok {
			t.Fatalf("sync %d: a stream the operator does not manage judged: %v", i+1, v)
		}
		if left := j.unjudged(streams); len(left) != 0 {
			t.Fatalf("sync %d: the operator's tags %v unjudged beside a stream it does not manage", i+1, left)
		}
		j.clock.Step(time.Second)
	}
	if reads := store.took(); slices.Contains(reads, "sha256:theirs") {
		t.Errorf("read %v: the image of a stream the operator does not manage", reads)
	}
}
