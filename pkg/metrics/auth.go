package metrics

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	defaultVerdictTTL = 10 * time.Second
	maxCachedVerdicts = 256
	// DefaultMaxReviewsInFlight bounds the tokens under review at once. A scraper's token is
	// reviewed once per TTL; many tokens at once are someone guessing, and get 429 above this.
	DefaultMaxReviewsInFlight = 4
	// reviewTimeout bounds one TokenReview and SubjectAccessReview pair, whoever waits for it.
	reviewTimeout = 10 * time.Second
)

// errBusy is a review refused because DefaultMaxReviewsInFlight are already under way.
var errBusy = errors.New("too many token reviews in flight")

// verdict is what the API server said about one bearer token.
type verdict int

const (
	unauthenticated verdict = iota // 401
	forbidden                      // 403
	allowed                        // 200
)

// reviewer asks the API server who a bearer token belongs to (TokenReview) and whether that user
// may get a path (SubjectAccessReview), and remembers the answer for a short while so that a
// scraper costs at most one TokenReview and one SubjectAccessReview per TTL. Tokens are kept only
// as SHA-256 digests.
type reviewer struct {
	tokens authenticationclient.TokenReviewInterface
	sars   authorizationclient.SubjectAccessReviewInterface
	path   string
	ttl    time.Duration
	clock  clock.PassiveClock

	// slots holds one token per review in flight; a review that finds it full is refused.
	slots chan struct{}

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedVerdict
	// inFlight are the reviews under way, so that concurrent requests with one token wait for
	// one review instead of each sending their own.
	inFlight map[[sha256.Size]byte]*review
}

// review is one TokenReview and SubjectAccessReview pair under way.
type review struct {
	done    chan struct{}
	verdict verdict
	err     error
}

type cachedVerdict struct {
	verdict verdict
	expires time.Time
}

func newReviewer(tokens authenticationclient.TokenReviewInterface, sars authorizationclient.SubjectAccessReviewInterface,
	path string, ttl time.Duration, maxInFlight int, clk clock.PassiveClock) *reviewer {
	return &reviewer{
		tokens: tokens, sars: sars, path: path, ttl: ttl, clock: clk,
		slots:    make(chan struct{}, maxInFlight),
		cache:    map[[sha256.Size]byte]cachedVerdict{},
		inFlight: map[[sha256.Size]byte]*review{},
	}
}

func (r *reviewer) review(ctx context.Context, token string) (verdict, error) {
	key := sha256.Sum256([]byte(token))
	now := r.clock.Now()
	r.mu.Lock()
	if cached, found := r.cache[key]; found && now.Before(cached.expires) {
		r.mu.Unlock()
		return cached.verdict, nil
	}
	if under, found := r.inFlight[key]; found {
		r.mu.Unlock()
		select {
		case <-under.done:
			return under.verdict, under.err
		case <-ctx.Done():
			return unauthenticated, ctx.Err()
		}
	}
	select {
	case r.slots <- struct{}{}:
	default:
		r.mu.Unlock()
		return unauthenticated, errBusy
	}
	under := &review{done: make(chan struct{})}
	r.inFlight[key] = under
	r.mu.Unlock()

	// The review outlives a client that hangs up: others may be waiting for it.
	askCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
	under.verdict, under.err = r.ask(askCtx, token)
	cancel()
	<-r.slots

	r.mu.Lock()
	delete(r.inFlight, key)
	if under.err == nil {
		r.remember(key, under.verdict, now)
	}
	r.mu.Unlock()
	close(under.done)
	return under.verdict, under.err
}

// remember caches a verdict; r.mu is held. A full cache drops the expired verdicts, then those
// that refuse, and only when every verdict left lets a scraper in, all of them: tokens guessed
// by anyone who can reach the port fill the cache with refusals, and must not cost an authorised
// scraper its verdict (only holders of allowed tokens can fill it with those).
func (r *reviewer) remember(key [sha256.Size]byte, v verdict, now time.Time) {
	for _, evict := range []func(cachedVerdict) bool{
		func(c cachedVerdict) bool { return !now.Before(c.expires) },
		func(c cachedVerdict) bool { return c.verdict != allowed },
		func(cachedVerdict) bool { return true },
	} {
		if len(r.cache) < maxCachedVerdicts {
			break
		}
		for k, c := range r.cache {
			if evict(c) {
				delete(r.cache, k)
			}
		}
	}
	r.cache[key] = cachedVerdict{verdict: v, expires: now.Add(r.ttl)}
}

func (r *reviewer) ask(ctx context.Context, token string) (verdict, error) {
	tr, err := r.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return unauthenticated, err
	}
	if !tr.Status.Authenticated {
		return unauthenticated, nil
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := r.sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  user.Username,
		UID:                   user.UID,
		Groups:                user.Groups,
		Extra:                 extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.path, Verb: "get"},
	}}, metav1.CreateOptions{})
	if err != nil {
		return forbidden, err
	}
	if !sar.Status.Allowed {
		return forbidden, nil
	}
	return allowed, nil
}

// protect lets a request through to next only when its bearer token may get r.path.
func (r *reviewer) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearerToken(req)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		v, err := r.review(req.Context(), token)
		if errors.Is(err, errBusy) {
			// Not logged: a flood of guessed tokens must not flood the log too.
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
			return
		}
		if err != nil {
			klog.ErrorS(err, "Metrics server: reviewing a scraper's token")
			http.Error(w, "authentication or authorization is unavailable", http.StatusInternalServerError)
			return
		}
		switch v {
		case allowed:
			next.ServeHTTP(w, req)
		case forbidden:
			http.Error(w, "Forbidden", http.StatusForbidden)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		}
	})
}

func bearerToken(req *http.Request) (string, bool) {
	scheme, token, found := strings.Cut(req.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
