package sampleusage

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "github.com/openshift/api/apps/v1"
	buildv1 "github.com/openshift/api/build/v1"
	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	kappsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imagerefs"
)

const (
	pythonDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	rubyDigest   = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	internalRepo = "image-registry.openshift-image-registry.svc:5000/openshift/python"
)

func catalog() *Catalog {
	python := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: "openshift"},
		Status: imagev1.ImageStreamStatus{
			DockerImageRepository: internalRepo,
			Tags: []imagev1.NamedTagEventList{
				{Tag: "3.9", Items: []imagev1.TagEvent{{Image: pythonDigest}}},
				{Tag: "latest", Items: []imagev1.TagEvent{{Image: pythonDigest}}},
			},
		},
	}
	ruby := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"},
		Status: imagev1.ImageStreamStatus{Tags: []imagev1.NamedTagEventList{
			{Tag: "3.3", Items: []imagev1.TagEvent{{Image: rubyDigest}}},
		}},
	}
	// An admin's stream of the same name elsewhere is no sample.
	other := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "openshift"}}
	return NewCatalog("openshift", []string{"python", "ruby"}, []string{"rails-postgresql-example"}, []*imagev1.ImageStream{python, ruby, other})
}

func meta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

func use(stream, tag, kind, ns, name, via string) Use {
	return Use{Sample: Sample{ImageStream: stream, Tag: tag}, Kind: kind, Namespace: ns, Name: name, Via: via}
}

func TestBuildConfigUses(t *testing.T) {
	c := catalog()
	ist := func(ns, name string) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: ns, Name: name}
	}
	cases := map[string]struct {
		bc   buildv1.BuildConfigSpec
		want []Use
	}{
		"source strategy with a trigger that follows it": {
			bc: buildv1.BuildConfigSpec{
				CommonSpec: buildv1.CommonSpec{Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: ist("openshift", "python:3.9")}}},
				Triggers:   []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{}}},
			},
			want: []Use{use("python", "3.9", "BuildConfig", "app", "bc", ViaImageChange), use("python", "3.9", "BuildConfig", "app", "bc", ViaStrategy)},
		},
		"a trigger on another tag, a docker strategy by digest": {
			bc: buildv1.BuildConfigSpec{
				CommonSpec: buildv1.CommonSpec{Strategy: buildv1.BuildStrategy{DockerStrategy: &buildv1.DockerBuildStrategy{
					From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33@" + rubyDigest},
				}}},
				Triggers: []buildv1.BuildTriggerPolicy{{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{From: &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "python"}}}},
			},
			want: []Use{use("python", "latest", "BuildConfig", "app", "bc", ViaImageChange), use("ruby", "3.3", "BuildConfig", "app", "bc", ViaStrategy)},
		},
		"source images, ImageStreamImage, internal registry": {
			bc: buildv1.BuildConfigSpec{CommonSpec: buildv1.CommonSpec{
				Source: buildv1.BuildSource{Images: []buildv1.ImageSource{
					{From: corev1.ObjectReference{Kind: "ImageStreamImage", Namespace: "openshift", Name: "ruby@" + rubyDigest}},
					{From: corev1.ObjectReference{Kind: "DockerImage", Name: internalRepo + ":3.9"}},
				}},
				Strategy: buildv1.BuildStrategy{CustomStrategy: &buildv1.CustomBuildStrategy{From: corev1.ObjectReference{Kind: "DockerImage", Name: internalRepo + "@" + pythonDigest}}},
			}},
			want: []Use{
				use("python", "3.9", "BuildConfig", "app", "bc", ViaSourceImage),
				use("python", "3.9", "BuildConfig", "app", "bc", ViaStrategy),
				use("python", "latest", "BuildConfig", "app", "bc", ViaStrategy),
				use("ruby", "3.3", "BuildConfig", "app", "bc", ViaSourceImage),
			},
		},
		"another namespace's stream, an unknown one, a stream without namespace in the app's": {
			bc: buildv1.BuildConfigSpec{CommonSpec: buildv1.CommonSpec{Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: ist("", "python:3.9")}}},
				Triggers: []buildv1.BuildTriggerPolicy{
					{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{From: &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "mine:1"}}},
					{Type: buildv1.ConfigChangeBuildTriggerType},
				}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := c.BuildConfig(&buildv1.BuildConfig{ObjectMeta: meta("app", "bc"), Spec: tc.bc})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDeploymentConfigAndWorkloadUses(t *testing.T) {
	c := catalog()
	dc := &appsv1.DeploymentConfig{ObjectMeta: meta("app", "dc"), Spec: appsv1.DeploymentConfigSpec{
		Triggers: []appsv1.DeploymentTriggerPolicy{{Type: appsv1.DeploymentTriggerOnImageChange, ImageChangeParams: &appsv1.DeploymentTriggerImageChangeParams{
			From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby:3.3"}}}},
		Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "quay.io/someone/else:1"}}}},
	}}
	if got, want := c.DeploymentConfig(dc), []Use{use("ruby", "3.3", "DeploymentConfig", "app", "dc", ViaImageChange)}; !reflect.DeepEqual(got, want) {
		t.Errorf("DeploymentConfig: got %+v, want %+v", got, want)
	}
	d := &kappsv1.Deployment{ObjectMeta: meta("app", "web"), Spec: kappsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Image: "registry.redhat.io/ubi9/python-39@" + pythonDigest}},
	}}}}
	d.Annotations = map[string]string{"image.openshift.io/triggers": `[{"from":{"kind":"ImageStreamTag","name":"ruby:3.3","namespace":"openshift"},"fieldPath":"spec.template.spec.containers[?(@.name==\"web\")].image"}]`}
	want := []Use{
		use("python", "3.9", "Deployment", "app", "web", ViaContainerImage),
		use("python", "latest", "Deployment", "app", "web", ViaContainerImage),
		use("ruby", "3.3", "Deployment", "app", "web", ViaTriggerAnnot),
	}
	if got := c.Workload("Deployment", d, &d.Spec.Template.Spec); !reflect.DeepEqual(got, want) {
		t.Errorf("Deployment: got %+v\nwant %+v", got, want)
	}
	d.Annotations["image.openshift.io/triggers"] = "not json"
	if got := c.Workload("Deployment", d, nil); len(got) != 0 {
		t.Errorf("a malformed annotation triggers nothing: got %+v", got)
	}
}

func TestTemplateInstanceAndPodUses(t *testing.T) {
	c := catalog()
	ti := &templatev1.TemplateInstance{ObjectMeta: meta("app", "ti"), Spec: templatev1.TemplateInstanceSpec{Template: templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "rails-postgresql-example"}}}}
	want := []Use{{Sample: Sample{Template: "rails-postgresql-example"}, Kind: "TemplateInstance", Namespace: "app", Name: "ti", Via: ViaTemplate}}
	if got := c.TemplateInstance(ti); !reflect.DeepEqual(got, want) {
		t.Errorf("TemplateInstance: got %+v, want %+v", got, want)
	}
	ti.Spec.Template.Name = "my-own"
	if got := c.TemplateInstance(ti); len(got) != 0 {
		t.Errorf("an instance of another template: %+v", got)
	}

	pod := &corev1.Pod{ObjectMeta: meta("app", "web-1"),
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "image-registry.openshift-image-registry.svc:5000/app/web@sha256:9999999999999999999999999999999999999999999999999999999999999999"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{ImageID: "registry.redhat.io/ubi9/ruby-33@" + rubyDigest},
		}},
	}
	if got, want := c.Pod(pod), []Use{use("ruby", "3.3", "Pod", "app", "web-1", ViaRunningImage)}; !reflect.DeepEqual(got, want) {
		t.Errorf("Pod: got %+v, want %+v", got, want)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if got := c.Pod(pod); len(got) != 0 {
		t.Errorf("an ended pod uses nothing: %+v", got)
	}
}

func TestTargetMatches(t *testing.T) {
	tagged := use("python", "3.9", "Pod", "a", "p", ViaRunningImage)
	untagged := use("python", "", "Pod", "a", "p", ViaRunningImage)
	tmpl := Use{Sample: Sample{Template: "t"}}
	cases := []struct {
		t    Target
		u    Use
		want bool
	}{
		{Target{}, tagged, true},
		{Target{ImageStream: "python"}, tagged, true},
		{Target{ImageStream: "python", Tag: "3.9"}, tagged, true},
		{Target{ImageStream: "python", Tag: "3.8"}, tagged, false},
		{Target{ImageStream: "python", Tag: "3.8"}, untagged, true},
		{Target{ImageStream: "ruby"}, tagged, false},
		{Target{Template: "t"}, tmpl, true},
		{Target{Template: "t"}, tagged, false},
		{Target{ImageStream: "python"}, tmpl, false},
	}
	for _, tc := range cases {
		if got := tc.t.Matches(tc.u); got != tc.want {
			t.Errorf("%+v matches %+v = %v, want %v", tc.t, tc.u.Sample, got, tc.want)
		}
	}
}

func TestParseTarget(t *testing.T) {
	known := Known{ImageStreamTags: map[string][]string{"python": {"3.9", "latest"}, "nodejs": {"20"}}, Templates: []string{"rails-postgresql-example"}}
	for arg, want := range map[string]Target{
		"python":                   {ImageStream: "python"},
		"python:3.9":               {ImageStream: "python", Tag: "3.9"},
		"rails-postgresql-example": {Template: "rails-postgresql-example"},
	} {
		if got, err := ParseTarget(arg, known); err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", arg, got, err, want)
		}
	}
	for arg, wantErr := range map[string]string{
		"pyhton":                     `no sample imagestream or template is named "pyhton" (did you mean "python"?)`,
		"zzzzzzzz":                   `no sample imagestream or template is named "zzzzzzzz"`,
		"python:3.8":                 `imagestream python has no tag "3.8" (did you mean "3.9"?); its tags: 3.9, latest`,
		"rails-postgresql-example:1": "rails-postgresql-example is a template: templates have no tags",
		"python:":                    `"python:" is not SAMPLE or IMAGESTREAM:TAG`,
		":3.9":                       `":3.9" is not SAMPLE or IMAGESTREAM:TAG`,
		"rails-postgresql-exampel":   `(did you mean "rails-postgresql-example"?)`,
		"python:3.9:x":               "is not SAMPLE or IMAGESTREAM:TAG",
	} {
		_, err := ParseTarget(arg, known)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseTarget(%q) error %v, want one containing %q", arg, err, wantErr)
		}
		if err != nil && strings.Contains(wantErr, "zzzz") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("no suggestion is near %q: %v", arg, err)
		}
	}
}

// A tag whose spec follows another tag of its stream takes that tag's image: a user of
// "ruby:latest" uses "ruby:3.3-ubi9" too, however long the chain, and a chain that loops ends.
func TestAUseCountsForEveryTagItFollows(t *testing.T) {
	follow := func(name, from string) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: from}}
	}
	ruby := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			{Name: "3.3-ubi9", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}},
			follow("3.3", "ruby:3.3-ubi9"),
			follow("latest", "3.3"),
			follow("loop-a", "loop-b"),
			follow("loop-b", "ruby:loop-a"),
			// Another stream's tag, or one in another namespace, is not followed.
			follow("elsewhere", "python:3.9"),
			{Name: "other-ns", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "mine", Name: "ruby:3.3-ubi9"}},
		}},
	}
	c := NewCatalog("openshift", []string{"ruby"}, nil, []*imagev1.ImageStream{ruby})
	cases := []struct {
		uses       string
		target     string
		wantFollow []string
		want       bool
	}{
		{"latest", "3.3-ubi9", []string{"3.3", "3.3-ubi9"}, true},
		{"latest", "3.3", []string{"3.3", "3.3-ubi9"}, true},
		{"3.3", "3.3-ubi9", []string{"3.3-ubi9"}, true},
		{"3.3-ubi9", "latest", nil, false}, // following goes one way
		{"loop-a", "loop-b", []string{"loop-b"}, true},
		{"loop-b", "loop-a", []string{"loop-a"}, true},
		{"elsewhere", "3.3-ubi9", nil, false},
		{"other-ns", "3.3-ubi9", nil, false},
	}
	for _, tc := range cases {
		bc := &buildv1.BuildConfig{ObjectMeta: meta("app", "bc"), Spec: buildv1.BuildConfigSpec{CommonSpec: buildv1.CommonSpec{
			Strategy: buildv1.BuildStrategy{SourceStrategy: &buildv1.SourceBuildStrategy{From: corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby:" + tc.uses}}},
		}}}
		uses := c.BuildConfig(bc)
		if len(uses) != 1 {
			t.Fatalf("a BuildConfig on ruby:%s: %+v", tc.uses, uses)
		}
		target := Target{ImageStream: "ruby", Tag: tc.target}
		if got := target.Matches(uses[0]); got != tc.want {
			t.Errorf("a user of ruby:%s is a user of ruby:%s: %v, want %v (%+v)", tc.uses, tc.target, got, tc.want, uses[0])
		}
		if got := imagerefs.FollowedTags(ruby, tc.uses); !reflect.DeepEqual(got, tc.wantFollow) {
			t.Errorf("ruby:%s follows %v, want %v", tc.uses, got, tc.wantFollow)
		}
	}
}

// The suggestion is the nearest candidate, the first by name among equally near ones, in whatever
// order the candidates come.
func TestSuggestionIsTheNearestThenFirstByName(t *testing.T) {
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"3.1", []string{"3.10", "3.11"}, "3.10"},
		{"3.1", []string{"3.11", "3.10"}, "3.10"},
		{"rubi", []string{"ruby", "a"}, "ruby"},
	} {
		if got, want := suggestion(tc.word, tc.candidates), ` (did you mean "`+tc.want+`"?)`; got != want {
			t.Errorf("suggestion(%q, %q) = %q, want %q", tc.word, tc.candidates, got, want)
		}
	}
}

// An object that names one sample twice the same way uses it once.
func TestAUseIsCountedOncePerObject(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: meta("app", "web"), Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Image: "registry.redhat.io/ubi9/ruby-33@" + rubyDigest},
		{Name: "b", Image: "registry.redhat.io/ubi9/ruby-33@" + rubyDigest},
	}}}
	if got, want := catalog().Pod(pod), []Use{use("ruby", "3.3", "Pod", "app", "web", ViaRunningImage)}; !reflect.DeepEqual(got, want) {
		t.Errorf("Pod: got %+v, want %+v", got, want)
	}
}

// A DeploymentConfig uses the samples its pod template's containers run, beside its triggers'.
func TestDeploymentConfigTemplateUses(t *testing.T) {
	dc := &appsv1.DeploymentConfig{ObjectMeta: meta("app", "dc"), Spec: appsv1.DeploymentConfigSpec{
		Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "registry.redhat.io/ubi9/ruby-33@" + rubyDigest}}}},
	}}
	if got, want := catalog().DeploymentConfig(dc), []Use{use("ruby", "3.3", "DeploymentConfig", "app", "dc", ViaContainerImage)}; !reflect.DeepEqual(got, want) {
		t.Errorf("DeploymentConfig: got %+v, want %+v", got, want)
	}
	if got := catalog().DeploymentConfig(&appsv1.DeploymentConfig{ObjectMeta: meta("app", "bare")}); len(got) != 0 {
		t.Errorf("a DeploymentConfig without a template: %+v", got)
	}
}

// What a scan passes over (a stream that is no sample, a tag event without an image, a trigger of
// another type or without its parameters) must not end the scan, and a sample's name in another
// namespace is no sample.
func TestWhatIsPassedOverDoesNotEndTheScan(t *testing.T) {
	mine := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "openshift"}}
	python := &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: "openshift"},
		Status: imagev1.ImageStreamStatus{
			DockerImageRepository: internalRepo,
			Tags:                  []imagev1.NamedTagEventList{{Tag: "3.9", Items: []imagev1.TagEvent{{Image: ""}, {Image: pythonDigest}}}},
		},
	}
	c := NewCatalog("openshift", []string{"python"}, nil, []*imagev1.ImageStream{mine, python})
	ist := &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "python:3.9"}
	bc := &buildv1.BuildConfig{ObjectMeta: meta("app", "bc"), Spec: buildv1.BuildConfigSpec{
		CommonSpec: buildv1.CommonSpec{
			Source: buildv1.BuildSource{Images: []buildv1.ImageSource{
				{From: corev1.ObjectReference{Kind: "ImageStreamImage", Namespace: "app", Name: "python@" + pythonDigest}},
			}},
			Strategy: buildv1.BuildStrategy{DockerStrategy: &buildv1.DockerBuildStrategy{
				From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-39@" + pythonDigest},
			}},
		},
		Triggers: []buildv1.BuildTriggerPolicy{
			{Type: buildv1.ConfigChangeBuildTriggerType},
			{Type: buildv1.ImageChangeBuildTriggerType},
			{Type: buildv1.ImageChangeBuildTriggerType, ImageChange: &buildv1.ImageChangeTrigger{From: ist}},
		},
	}}
	want := []Use{
		use("python", "3.9", "BuildConfig", "app", "bc", ViaImageChange),
		use("python", "3.9", "BuildConfig", "app", "bc", ViaStrategy),
	}
	if got := c.BuildConfig(bc); !reflect.DeepEqual(got, want) {
		t.Errorf("BuildConfig: got %+v\nwant %+v", got, want)
	}
	dc := &appsv1.DeploymentConfig{ObjectMeta: meta("app", "dc"), Spec: appsv1.DeploymentConfigSpec{
		Triggers: []appsv1.DeploymentTriggerPolicy{
			{Type: appsv1.DeploymentTriggerOnConfigChange},
			{Type: appsv1.DeploymentTriggerOnImageChange},
			{Type: appsv1.DeploymentTriggerOnImageChange, ImageChangeParams: &appsv1.DeploymentTriggerImageChangeParams{From: *ist}},
		},
	}}
	if got, want := c.DeploymentConfig(dc), []Use{use("python", "3.9", "DeploymentConfig", "app", "dc", ViaImageChange)}; !reflect.DeepEqual(got, want) {
		t.Errorf("DeploymentConfig: got %+v\nwant %+v", got, want)
	}
}
