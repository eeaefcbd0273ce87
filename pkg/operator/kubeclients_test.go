package operator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestTheLeaseNeverWaitsForTheOperatorsBudget: with the operator's token bucket spent, a lease
// renewal still reaches the API server at once, and the operator's other requests wait.
func TestTheLeaseNeverWaitsForTheOperatorsBudget(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"l"}}`))
	}))
	defer server.Close()
	cfg := &rest.Config{Host: server.URL, QPS: 1, Burst: 1}
	// A bucket that gives no token in the time of the test: the operator's budget, spent.
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(0.0001, 1)
	cfg.RateLimiter.Accept()
	kube, err := newKubeClients(cfg)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := kube.CoordinationV1().Leases("ns").Get(ctx, "l", metav1.GetOptions{}); err != nil {
		t.Errorf("a lease renewal waited for the operator's spent budget: %v", err)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelShort()
	if _, err := kube.CoreV1().ConfigMaps("ns").Get(short, "c", metav1.GetOptions{}); err == nil {
		t.Error("positive control: the operator's own request did not wait for its spent budget")
	}
}
