package metrics

import (
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestGuessedTokensDoNotEvictTheScrapersVerdict: a client without a valid token sends more
// guessed tokens than the cache holds, within one TTL. Prometheus's cached verdict stays, so
// its next scrape costs no review, and the cache stays bounded.
func TestGuessedTokensDoNotEvictTheScrapersVerdict(t *testing.T) {
	api := newFakeAPI()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := newReviewer(api.AuthenticationV1().TokenReviews(), api.AuthorizationV1().SubjectAccessReviews(), "/metrics", time.Minute, 1, clk)
	ctx := context.Background()
	if v, err := r.review(ctx, "scraper-token"); err != nil || v != allowed {
		t.Fatalf("scraper: %v, %v; want allowed", v, err)
	}
	for i := range 3 * maxCachedVerdicts {
		if v, err := r.review(ctx, fmt.Sprintf("guess-%d", i)); err != nil || v != unauthenticated {
			t.Fatalf("guess %d: %v, %v; want unauthenticated", i, v, err)
		}
		if len(r.cache) > maxCachedVerdicts {
			t.Fatalf("%d cached verdicts, want at most %d", len(r.cache), maxCachedVerdicts)
		}
	}
	before, _ := api.calls()
	if v, err := r.review(ctx, "scraper-token"); err != nil || v != allowed {
		t.Fatalf("scraper after the guesses: %v, %v; want allowed", v, err)
	}
	if after, _ := api.calls(); after != before {
		t.Errorf("the scraper's verdict was evicted by guessed tokens: %d more TokenReviews, want 0", after-before)
	}
}
