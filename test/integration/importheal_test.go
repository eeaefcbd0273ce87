package integration

import (
	"context"
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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
)

// TestRealImportsHealAsSoonAsTheirCauseGoes: on the real openshift-apiserver and
// openshift-controller-manager's import controllers, with the operator's shipped retry interval
// (15 minutes), three imagestreams fail to import for three causes that an admin then removes,
// and each heals within seconds to a minute, not at the next 15-minute retry:
//   - nodejs fails for want of a mirror set: it imports once an ImageTagMirrorSet names a mirror
//     that holds its images (the operator retries every failing stream when a mirror set changes),
//     before its next scheduled retry;
//   - ruby's mirror wants a login: it imports once a docker config secret with the credentials
//     is created in openshift, where the imports read them (a pull secret arriving late), before
//     its next scheduled retry;
//   - python's images are missing from the mirror: they are pushed a minute after the failure,
//     with nothing changing in the cluster, and the operator's backoff (30 s, then twice as late
//     each time) imports them within about a minute.
//
// perl's images are nowhere: it keeps failing, and is retried at once when the install pull
// secret changes and again when its rollout to the nodes can have finished (shortened here),
// before its next scheduled retry.
//
// A stream's next scheduled retry comes at least imports.FirstRetryDelay after its last import,
// which the audit log tells: each fix comes right after one, and its heal or retry must come
// before that bound, which no retry but the fix's own can meet.
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
	// The inventory's registries are out of reach (the server's proxy is a closed port).
	e.onlyTheseFail(t, inv, streams)
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
	// The mirror set comes right after a scheduled retry of nodejs.
	nodejsRetried := e.waitScheduledImport(t, "nodejs", time.Now(), 90*time.Second)
	mirrorSetAt := time.Now()
	e.createTagMirrorSet(t, set)
	eventuallyEvery(t, 45*time.Second, 500*time.Millisecond, imported("nodejs"))
	mirrorSetHealed := time.Since(mirrorSetAt)
	healedBeforeNextRetry(t, "the mirror set", "nodejs", nodejsRetried, time.Now())
	eventually(t, 10*time.Second, func() (bool, string) {
		_, err := e.configMap("nodejs")
		return apierrors.IsNotFound(err), fmt.Sprintf("nodejs's import record: %v", err)
	})

	// Through the mirror set, ruby's mirror asks for a login and python's lacks the images.
	e.waitImportRecordSays(t, "ruby", 45*time.Second, locked)
	pythonFailedAt := e.waitImportRecordSays(t, "python", 45*time.Second, open)

	// The credentials arrive late, in openshift, where the imports read them, right after a
	// scheduled retry of ruby.
	rubyRetried := e.waitScheduledImport(t, "ruby", time.Now(), 2*time.Minute)
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
	healedBeforeNextRetry(t, "the credentials in openshift", "ruby", rubyRetried, time.Now())

	// python's images are pushed a minute after its import failed; nothing in the cluster changes.
	idle(t, time.Until(pythonFailedAt.Add(time.Minute)))
	importsBeforePush := e.importRequests(t)("python")
	pushAt := time.Now()
	for ref, digest := range pushAllVia(t, mirrorRefs(inv, "python", func(ref string) string { return onMirror("python", ref) }), e.cp.RegistryTransport()) {
		pushed[ref] = digest
	}
	// The backoff's next step brings it (a clock, not the machine's work): the turn is lent.
	idleUntil(t, 120*time.Second, 500*time.Millisecond, imported("python"))
	pushHealed := time.Since(pushAt)

	if pushHealed > 90*time.Second {
		t.Errorf("python imported %s after its images were pushed, want within the backoff's next step (about a minute)", pushHealed)
	}

	// The install pull secret changes: perl, which still fails, is retried at once, and again
	// when the rollout to the nodes can have finished.
	pullSecretAt := time.Now()
	updated := pullSecret("c2FtcGxlcy10ZXN0Om5ldy10b2tlbi02Nzg5MA==")
	if _, err := e.kube.CoreV1().Secrets("openshift-config").Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The retry at once starts perl's delays again: its next scheduled retry is at least
	// FirstRetryDelay after it, and the one after the rollout (15 s) must come before that.
	var retriedAt []time.Duration
	perlRetried := func() (bool, string) {
		retriedAt = retriedAt[:0]
		for _, at := range e.importTimes(t, "perl", pullSecretAt) {
			retriedAt = append(retriedAt, at.Sub(pullSecretAt).Round(100*time.Millisecond))
		}
		return len(retriedAt) > 0 && retriedAt[len(retriedAt)-1] >= opts.PullSecretRolloutWait,
			fmt.Sprintf("perl's imports since the pull secret changed, at %v: want one after %s", retriedAt, opts.PullSecretRolloutWait)
	}
	// The retry at once is the operator's answer to the change, awaited with the turn held; the
	// one after the rollout comes on a timer, awaited with the turn lent.
	eventuallyEvery(t, 2*opts.PullSecretRolloutWait, 500*time.Millisecond, func() (bool, string) {
		done, why := perlRetried()
		return done || len(retriedAt) > 0, why
	})
	idleUntil(t, 2*opts.PullSecretRolloutWait, 500*time.Millisecond, perlRetried)
	atOnce := retriedAt[0]
	nextScheduled := atOnce + imports.FirstRetryDelay
	if atOnce >= 5*time.Second {
		t.Errorf("perl's imports since the pull secret changed, at %v: want the first within 5 s", retriedAt)
	}
	if !slices.ContainsFunc(retriedAt, func(d time.Duration) bool { return d >= opts.PullSecretRolloutWait && d < nextScheduled }) {
		t.Errorf("perl's imports since the pull secret changed, at %v: none after the rollout (%s) and before its next scheduled retry (%s at the soonest)",
			retriedAt, opts.PullSecretRolloutWait, nextScheduled)
	}

	count := e.importRequests(t)
	t.Logf("heal: mirror set created -> nodejs imported %.1fs; pull secret in openshift created -> ruby imported %.1fs; "+
		"image pushed %.0fs after python's failure -> imported %.1fs; install pull secret changed -> perl retried at %v; "+
		"operator's imports: nodejs %d, ruby %d, python %d (%d before the push), perl %d",
		mirrorSetHealed.Seconds(), secretHealed.Seconds(), pushAt.Sub(pythonFailedAt).Seconds(), pushHealed.Seconds(), retriedAt,
		count("nodejs"), count("ruby"), count("python"), importsBeforePush, count("perl"))
}

// importTimes returns when the API server received each ImageStreamImport the operator sent for
// stream since since.
func (e *env) importTimes(t *testing.T, stream string, since time.Time) []time.Time {
	t.Helper()
	var at []time.Time
	for _, ev := range e.operatorRequests(t, verb("create"), on("imagestreamimports"), named(stream), receivedAfter(since)) {
		at = append(at, ev.Received)
	}
	return at
}

// waitNextImport waits for an ImageStreamImport of stream received after since and returns when
// the API server received it.
func (e *env) waitNextImport(t *testing.T, stream string, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	return e.nextImport(t, stream, since, timeout, eventuallyEvery)
}

// waitScheduledImport is waitNextImport for an import that only the stream's retry schedule
// brings: the test lends its turn while it waits (idleUntil).
func (e *env) waitScheduledImport(t *testing.T, stream string, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	return e.nextImport(t, stream, since, timeout, idleUntil)
}

func (e *env) nextImport(t *testing.T, stream string, since time.Time, timeout time.Duration,
	wait func(t *testing.T, timeout, interval time.Duration, cond func() (bool, string))) time.Time {
	t.Helper()
	var at []time.Time
	wait(t, timeout, 200*time.Millisecond, func() (bool, string) {
		at = e.importTimes(t, stream, since)
		return len(at) > 0, fmt.Sprintf("no import of %s since %s", stream, since.Format(time.RFC3339Nano))
	})
	return at[0]
}

// healedBeforeNextRetry fails the test unless the stream, last retried at lastRetry, healed
// before its next scheduled retry could have come: no sooner than imports.FirstRetryDelay later.
func healedBeforeNextRetry(t *testing.T, fix, stream string, lastRetry, healed time.Time) {
	t.Helper()
	if next := lastRetry.Add(imports.FirstRetryDelay); !healed.Before(next) {
		t.Errorf("%s healed %s %s after its last scheduled retry, not before the next one (due %s after it at the soonest): the fix's own retry did not heal it",
			fix, stream, healed.Sub(lastRetry).Round(100*time.Millisecond), imports.FirstRetryDelay)
	}
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

// TestImportsAreRetriedWhenOpenShiftAPIServersRolloutEnds: the image configuration's
// allowedRegistriesForImport and the Proxy reach openshift-apiserver as its operator rolls the
// server's pods out, which the openshift-apiserver ClusterOperator tells by Progressing. When
// the rollout ends, a failing stream is retried before its next scheduled retry could come.
func TestImportsAreRetriedWhenOpenShiftAPIServersRolloutEnds(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnv(t)
	ctx := context.Background()
	inv := x86Inventory(t)
	python, _ := inv.ImageStream("python")
	e.importer.FailReference(python.Spec.Tags[0].From.Name, "manifest unknown: "+python.Spec.Tags[0].From.Name)

	// A rollout is under way when the operator starts.
	co, err := e.config.ConfigV1().ClusterOperators().Create(ctx, &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "openshift-apiserver"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.config.ConfigV1().ClusterOperators().Delete(context.Background(), co.Name, metav1.DeleteOptions{})
	})
	setProgressing := func(status configv1.ConditionStatus) {
		t.Helper()
		co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, LastTransitionTime: metav1.Now()},
			{Type: configv1.OperatorProgressing, Status: status, LastTransitionTime: metav1.Now()},
		}
		if co, err = e.config.ConfigV1().ClusterOperators().UpdateStatus(ctx, co, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setProgressing(configv1.ConditionTrue)

	e.startOperator(defaultOptions()) // the shipped retry interval
	e.waitManaged(t, inv, "v1")
	e.waitImportRecordSays(t, "python", 60*time.Second, "")
	retried := e.waitScheduledImport(t, "python", time.Now(), 60*time.Second)
	doneAt := time.Now()
	setProgressing(configv1.ConditionFalse)
	eventuallyEvery(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		n := len(e.importTimes(t, "python", doneAt))
		return n > 0, "no import of python since openshift-apiserver's rollout ended"
	})
	if at := e.importTimes(t, "python", doneAt)[0]; !at.Before(retried.Add(imports.FirstRetryDelay)) {
		t.Errorf("python imported %s after the rollout ended and %s after its last scheduled retry: not the rollout's retry, which must come before the next scheduled one (%s after the last at the soonest)",
			at.Sub(doneAt).Round(100*time.Millisecond), at.Sub(retried).Round(100*time.Millisecond), imports.FirstRetryDelay)
	} else {
		t.Logf("python retried %s after openshift-apiserver's rollout ended", at.Sub(doneAt).Round(100*time.Millisecond))
	}
}
