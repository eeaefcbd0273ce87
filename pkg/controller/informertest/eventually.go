package informertest

import (
	"context"
	"testing"
	"time"

	"github.com/openshift/library-go/pkg/controller/factory"
)

// Eventually polls done until it holds and fails the test with what it last saw after ten
// seconds: a running controller answers within milliseconds, but the informers of a loaded CI
// machine's -race run may lag for seconds.
func Eventually(t testing.TB, what string, done func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, seen := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Run starts the informer factories, after the controller has asked them for its informers, and
// runs the controller with one worker until the test ends.
func Run(t testing.TB, ctrl factory.Controller, factories ...interface{ Start(<-chan struct{}) }) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	go ctrl.Run(ctx, 1)
	return ctx
}
