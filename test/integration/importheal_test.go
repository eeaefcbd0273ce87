package integration

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	configv1 "github.com/openshift/api/config/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
)

// TestRealImportsHealAsSoonAsTheirCauseGoes: on the real openshift-apiserver and
// openshift-controller-manager's import controllers, with the operator's shipped retry interval
// (15 minutes), three imagestreams fail to import for three causes that an admin then removes,
// and each heals within seconds to a minute, not at the next 15-minute retry:
//   - nodejs fails for want of a mirror set: it imports once an ImageTagMirrorSet names a mirror
//     that holds its images (the operator retries every failing stream when a mirror set changes);
//   - ruby's mirror wants a login: it imports once a docker config secret with the credentials
//     is created in openshift, where the imports read them (a pull secret arriving late);
//   - python's images are missing from the mirror: they are pushed a minute after the failure,
//     with nothing changing in the cluster, and the operator's backoff (30 s, then twice as late
//     each time) imports them within about a minute.
//
// perl's images are nowhere: it keeps failing, and is retried at once when the install pull
// secret changes and again when its rollout to the nodes can have finished (shortened here).
// It logs the seconds from each fix to the stream imported, and the imports the operator sent.
func TestRealImportsHealAsSoonAsTheirCauseGoes(t *testing.T) {
	parallel(t, 2*aboutAMinute)
	e, ctx := newEnvRealMirror(t)
	open, err := e.cp.StartTLSRegistry(ctx)
	if err != nil {
		t.Fatalf("starting the mirror: %v", err)
	}
	const user, password = "builder", "mirror-password-2026"
	locked, err := e.cp.StartTLSRegistryWithLogin(ctx, user, password)
	if err != nil {
		t.Fatalf("starting the mirror that wants a login: %v", err)
	}
	inv := x86Inventory(t)
	healing := []string{"nodejs", "python", "ruby"}
	streams := append(slices.Clone(healing), "perl")
	repos := repositoriesOf(t, inv, streams)
	mirrorFor := map[string]string{"nodejs": open, "python": open, "ruby": locked}

	// The mirrors hold nodejs's and ruby's images; python's come later.
	onMirror := func(stream, ref string) string { return normalizedRef(mirrorOf(ref, mirrorFor[stream])) }
	pushed := map[string]string{} // mirror reference -> digest
	for stream, push := range map[string]func([]string) map[string]string{
		"nodejs": func(refs []string) map[string]string { return pushAllVia(t, refs, e.cp.RegistryTransport()) },
		"ruby": func(refs []string) map[string]string {
			return pushAllWithLogin(t, refs, e.cp.RegistryTransport(), user, password)
		},
	} {
		for ref, digest := range push(mirrorRefs(inv, stream, func(ref string) string { return onMirror(stream, ref) })) {
			pushed[ref] = digest
		}
	}

	opts := defaultOptions() // the shipped retry interval: 15 minutes at most between retries
	opts.PullSecretRolloutWait = 15 * time.Second
	e.startOperator(opts)
	e.waitManaged(t, inv, "v1")
	var skipped []string
	for _, s := range inv.ImageStreamNames() {
		if !slices.Contains(streams, s) {
			skipped = append(skipped, s)
		}
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = skipped })
	// The inventory's registries are out of reach (the server's proxy is a closed port).
	for _, s := range streams {
		e.waitImportRecordSays(t, s, 60*time.Second, "")
	}
	imported := func(stream string) func() (bool, string) {
		return func() (bool, string) {
			pending := e.tagsNotImported([]string{stream}, func(s, tag string) string { return pushed[onMirror(s, fromOf(inv, s, tag))] })
			return len(pending) == 0, fmt.Sprintf("%d tags of %s not imported from the mirror: %.300v", len(pending), stream, pending)
		}
	}

	// The mirror set: one entry per repository of the three streams that heal.
	set := &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "samples-mirrors"}}
	for _, stream := range healing {
		for _, repo := range repos[stream] {
			set.Spec.ImageTagMirrors = append(set.Spec.ImageTagMirrors, configv1.ImageTagMirrors{
				Source: repo, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirrorOf(repo, mirrorFor[stream]))},
			})
		}
	}
	// The fixes below must heal well before the backoff's next retry could: after a stream's
	// first scheduled retry (30 s after its failure) the next is a minute away.
	eventuallyEvery(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		n := e.importRequests(t)("nodejs")
		return n >= 1, fmt.Sprintf("%d scheduled retries of nodejs so far", n)
	})
	mirrorSetAt := time.Now()
	e.createTagMirrorSet(t, set)
	eventuallyEvery(t, 45*time.Second, 500*time.Millisecond, imported("nodejs"))
	mirrorSetHealed := time.Since(mirrorSetAt)
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := e.configMap("nodejs")
		return apierrors.IsNotFound(err), fmt.Sprintf("nodejs's import record: %v", err)
	})

	// Through the mirror set, ruby's mirror asks for a login and python's lacks the images.
	e.waitImportRecordSays(t, "ruby", 45*time.Second, locked)
	pythonFailedAt := e.waitImportRecordSays(t, "python", 45*time.Second, open)

	// The credentials arrive late, in openshift, where the imports read them.
	secretAt := time.Now()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if _, err := e.kube.CoreV1().Secrets("openshift").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "mirror-credentials", Namespace: "openshift"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, locked, auth))},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyEvery(t, 45*time.Second, 500*time.Millisecond, imported("ruby"))
	secretHealed := time.Since(secretAt)
	// Both well below the 30 s at least until the next scheduled retry: the change retried them.
	for what, took := range map[string]time.Duration{"the mirror set": mirrorSetHealed, "the credentials in openshift": secretHealed} {
		if took > 15*time.Second {
			t.Errorf("%s healed its stream after %s: not at once, as a change of what can fix imports must", what, took)
		}
	}

	// python's images are pushed a minute after its import failed; nothing in the cluster changes.
	time.Sleep(time.Until(pythonFailedAt.Add(time.Minute)))
	importsBeforePush := e.importRequests(t)("python")
	pushAt := time.Now()
	for ref, digest := range pushAllVia(t, mirrorRefs(inv, "python", func(ref string) string { return onMirror("python", ref) }), e.cp.RegistryTransport()) {
		pushed[ref] = digest
	}
	eventuallyEvery(t, 120*time.Second, 500*time.Millisecond, imported("python"))
	pushHealed := time.Since(pushAt)

	if pushHealed > 90*time.Second {
		t.Errorf("python imported %s after its images were pushed, want within the backoff's next step (about a minute)", pushHealed)
	}

	// The install pull secret changes: perl, which still fails, is retried at once, and again
	// when the rollout to the nodes can have finished.
	perlImports := func() []time.Time {
		var at []time.Time
		for _, ev := range e.operatorRequests(t, verb("create"), on("imagestreamimports"), named("perl")) {
			at = append(at, ev.Received)
		}
		return at
	}
	perlBefore := len(perlImports())
	pullSecretAt := time.Now()
	updated := pullSecret("c2FtcGxlcy10ZXN0Om5ldy10b2tlbi02Nzg5MA==")
	if _, err := e.kube.CoreV1().Secrets("openshift-config").Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var retriedAt []time.Duration
	eventuallyEvery(t, 2*opts.PullSecretRolloutWait, 500*time.Millisecond, func() (bool, string) {
		retriedAt = retriedAt[:0]
		for _, at := range perlImports()[perlBefore:] {
			retriedAt = append(retriedAt, at.Sub(pullSecretAt).Round(100*time.Millisecond))
		}
		atOnce := len(retriedAt) > 0 && retriedAt[0] < 5*time.Second
		again := slices.ContainsFunc(retriedAt, func(d time.Duration) bool { return d >= opts.PullSecretRolloutWait })
		return atOnce && again, fmt.Sprintf("perl's imports since the pull secret changed, at %v: want one within 5s and one after %s", retriedAt, opts.PullSecretRolloutWait)
	})

	count := e.importRequests(t)
	t.Logf("heal: mirror set created -> nodejs imported %.1fs; pull secret in openshift created -> ruby imported %.1fs; "+
		"image pushed %.0fs after python's failure -> imported %.1fs; install pull secret changed -> perl retried at %v; "+
		"operator's imports: nodejs %d, ruby %d, python %d (%d before the push), perl %d",
		mirrorSetHealed.Seconds(), secretHealed.Seconds(), pushAt.Sub(pythonFailedAt).Seconds(), pushHealed.Seconds(), retriedAt,
		count("nodejs"), count("ruby"), count("python"), importsBeforePush, count("perl"))
}

// repositoriesOf returns, per stream, the repositories its DockerImage tags name; it fails the
// test when two of the streams share one (a mirror set entry would then serve both).
func repositoriesOf(t *testing.T, inv *inventory.Inventory, streams []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	owner := map[string]string{}
	for _, stream := range streams {
		is, ok := inv.ImageStream(stream)
		if !ok {
			t.Fatalf("the inventory has no %s", stream)
		}
		for _, tag := range is.Spec.Tags {
			if tag.From == nil || tag.From.Kind != "DockerImage" {
				continue
			}
			ref, err := name.ParseReference(tag.From.Name)
			if err != nil {
				t.Fatalf("%s:%s: %v", stream, tag.Name, err)
			}
			repo := ref.Context().Name()
			if o, ok := owner[repo]; ok && o != stream {
				t.Fatalf("%s and %s share the repository %s", o, stream, repo)
			}
			if owner[repo] == "" {
				owner[repo] = stream
				out[stream] = append(out[stream], repo)
			}
		}
	}
	return out
}

// mirrorRefs lists, sorted and once each, where the stream's DockerImage tags are mirrored.
func mirrorRefs(inv *inventory.Inventory, stream string, onMirror func(string) string) []string {
	is, _ := inv.ImageStream(stream)
	var refs []string
	for _, tag := range is.Spec.Tags {
		if tag.From != nil && tag.From.Kind == "DockerImage" && !slices.Contains(refs, onMirror(tag.From.Name)) {
			refs = append(refs, onMirror(tag.From.Name))
		}
	}
	slices.Sort(refs)
	return refs
}

// pushAllWithLogin is pushAllVia to a registry that wants a login.
func pushAllWithLogin(t *testing.T, refs []string, transport http.RoundTripper, user, password string) map[string]string {
	t.Helper()
	login := remote.WithAuth(&authn.Basic{Username: user, Password: password})
	return mirrortest.PushEach(t, refs, 4, func(ref string) (string, error) { return pushRandomImageVia(ref, transport, login) })
}

// waitImportRecordSays waits for the stream's import error record to exist with every value
// holding part, and returns when it was first seen so.
func (e *env) waitImportRecordSays(t *testing.T, stream string, timeout time.Duration, part string) time.Time {
	t.Helper()
	eventually(t, timeout, func() (bool, string) {
		cm, err := e.configMap(stream)
		if err != nil {
			return false, fmt.Sprintf("%s's import record: %v", stream, err)
		}
		for _, v := range cm.Data {
			if !strings.Contains(v, part) {
				return false, fmt.Sprintf("%s's import record %v, want every error to name %q", stream, cm.Data, part)
			}
		}
		return len(cm.Data) > 0, fmt.Sprintf("%s's import record is empty", stream)
	})
	return time.Now()
}
