package integration

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// TestRoutineTokenRefreshesRetryNoImport: on OpenShift 4.16 and later openshift-controller-manager
// refreshes the internal registry's token in the dockercfg secret of each service account of
// openshift (builder, default, deployer) about every 36 minutes. Those secrets hold credentials
// for the internal registry only, which no sample imports from: while imports fail, the three
// are refreshed every 2 s for 20 s, and the operator sends no import in that time, which lies
// before the first scheduled retry (imports.FirstRetryDelay after the failure's record). Then,
// right after a scheduled retry, credentials for the registry python imports from arrive in
// openshift, and python is retried at once, long before its next scheduled retry.
//
// On the real openshift-apiserver every import fails (its proxy is a closed port); on the
// stand-ins the emulator fails python's and ruby's.
func TestRoutineTokenRefreshesRetryNoImport(t *testing.T) {
	parallel(t, aboutAMinute)
	e := newEnv(t)
	ctx := context.Background()
	inv := x86Inventory(t)
	failing := []string{"python", "ruby"}
	e.failImportsOf(inv, failing)
	e.startOperator(defaultOptions()) // the shipped retry interval
	e.waitManaged(t, inv, "v1")
	e.onlyTheseFail(t, inv, failing)
	// The first scheduled retry of each stream comes FirstRetryDelay after its record.
	firstScheduled := time.Time{}
	for _, s := range failing {
		records := e.operatorRequests(t, verb("create"), on("configmaps"), named(s), carriedOut)
		if len(records) == 0 {
			t.Fatalf("no create of %s's import record in the audit log", s)
		}
		if at := records[0].Time.Add(imports.FirstRetryDelay); firstScheduled.IsZero() || at.Before(firstScheduled) {
			firstScheduled = at
		}
	}

	churnFrom := time.Now()
	churnUntil := churnFrom.Add(20 * time.Second)
	if quiet := firstScheduled.Add(-imports.FirstRetryDelay / 10); churnUntil.After(quiet) {
		churnUntil = quiet
	}
	secrets := e.kube.CoreV1().Secrets("openshift")
	refreshes := 0
	for token := 1; time.Now().Before(churnUntil); token++ {
		for _, sa := range []string{"builder", "default", "deployer"} {
			if err := putSecret(ctx, e, internalRegistrySecret(sa, token)); err != nil {
				t.Fatal(err)
			}
			refreshes++
		}
		time.Sleep(2 * time.Second)
	}
	// A fix is acted on again imports' ServerCacheLag later: wait that out too.
	time.Sleep(4 * time.Second)
	var sent []string
	for _, s := range failing {
		for _, at := range e.importTimes(t, s, churnFrom) {
			if at.Before(firstScheduled) {
				sent = append(sent, fmt.Sprintf("%s at +%.1fs", s, at.Sub(churnFrom).Seconds()))
			}
		}
	}
	t.Logf("%d refreshes of the internal registry's dockercfg secrets in %.1f s; imports sent before the first scheduled retry: %v",
		refreshes, churnUntil.Sub(churnFrom).Seconds(), sent)
	if refreshes < 9 {
		t.Fatalf("only %d refreshes before the first scheduled retry: the check proves nothing", refreshes)
	}
	if len(sent) > 0 {
		t.Errorf("the internal registry's token refreshes retried imports: %v", sent)
	}

	// Credentials for the registry python imports from are a fix: right after a scheduled retry
	// they retry python at once.
	python, _ := inv.ImageStream("python")
	registries := sets.List(imports.ImportRegistries([]*imagev1.ImageStream{python}, "", nil))
	sort.Strings(registries)
	retried := e.waitScheduledImport(t, "python", churnUntil, 2*time.Minute)
	auths := ""
	for i, r := range registries {
		if i > 0 {
			auths += ","
		}
		auths += fmt.Sprintf("%q:{\"auth\":%q}", r, base64.StdEncoding.EncodeToString([]byte("samples:secret")))
	}
	credentialsAt := time.Now()
	if _, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "samples-registry-credentials", Namespace: "openshift"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{` + auths + `}}`)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fixRetry := e.waitNextImport(t, "python", credentialsAt, 20*time.Second)
	if next := retried.Add(imports.FirstRetryDelay); !fixRetry.Before(next) {
		t.Errorf("python retried %.1f s after credentials for %v arrived, not before its next scheduled retry", fixRetry.Sub(credentialsAt).Seconds(), registries)
	}
	t.Logf("credentials for %v created -> python retried %.2f s later", registries, fixRetry.Sub(credentialsAt).Seconds())
}

// internalRegistrySecret is the dockercfg secret openshift-controller-manager keeps for a service
// account of openshift, holding a token for the internal registry under each of its names.
func internalRegistrySecret(serviceAccount string, token int) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("<token>:bound-token-%d", token)))
	cfg := "{"
	for i, host := range []string{"image-registry.openshift-image-registry.svc:5000", "image-registry.openshift-image-registry.svc.cluster.local:5000", "172.30.40.17:5000"} {
		if i > 0 {
			cfg += ","
		}
		cfg += fmt.Sprintf("%q:{\"auth\":%q}", host, auth)
	}
	cfg += "}"
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccount + "-dockercfg-5xk2q", Namespace: "openshift",
			Annotations: map[string]string{"kubernetes.io/service-account.name": serviceAccount}},
		Type: corev1.SecretTypeDockercfg,
		Data: map[string][]byte{corev1.DockerConfigKey: []byte(cfg)},
	}
}

// putSecret creates the secret, or replaces the data of the one there.
func putSecret(ctx context.Context, e *env, s *corev1.Secret) error {
	secrets := e.kube.CoreV1().Secrets(s.Namespace)
	live, err := secrets.Get(ctx, s.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	live.Data = s.Data
	_, err = secrets.Update(ctx, live, metav1.UpdateOptions{})
	return err
}

// failImportsOf makes every DockerImage tag of the streams fail to import on the stand-ins (on
// the real openshift-apiserver every import fails: its proxy is a closed port).
func (e *env) failImportsOf(inv *inventory.Inventory, streams []string) {
	for _, stream := range streams {
		is, _ := inv.ImageStream(stream)
		for _, tag := range is.Spec.Tags {
			if tag.From != nil && tag.From.Kind == "DockerImage" {
				e.importer.FailReference(tag.From.Name, "unauthorized: authentication required")
			}
		}
	}
}

// onlyTheseFail skips every other imagestream of the inventory, so that only the failing ones
// are retried, and waits for their import records.
func (e *env) onlyTheseFail(t *testing.T, inv *inventory.Inventory, failing []string) {
	t.Helper()
	var skipped []string
	for _, s := range inv.ImageStreamNames() {
		if !slices.Contains(failing, s) {
			skipped = append(skipped, s)
		}
	}
	e.updateConfig(func(c *samplesv1.Config) { c.Spec.SkippedImagestreams = skipped })
	for _, s := range failing {
		e.waitImportRecordSays(t, s, 60*time.Second, "")
	}
}
