package integration

import (
	"context"
	"os"
	"time"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

func startShared() (*controlplane.ControlPlane, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return controlplane.Start(ctx, controlplane.Options{})
}

func exitWith(code int) { os.Exit(code) }
