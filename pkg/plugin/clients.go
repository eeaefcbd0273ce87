package plugin

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	appsclient "github.com/openshift/client-go/apps/clientset/versioned"
	buildclient "github.com/openshift/client-go/build/clientset/versioned"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	operatorclient "github.com/openshift/client-go/operator/clientset/versioned"
	projectclient "github.com/openshift/client-go/project/clientset/versioned"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned"
	templateclient "github.com/openshift/client-go/template/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Exit statuses of every verb.
const (
	ExitOK = 0
	// ExitFailing: something the verb reports is failing (an import, a refusal to skip, a part of
	// the cluster it could not see).
	ExitFailing = 1
	// ExitUsage: bad arguments, or the cluster could not be asked.
	ExitUsage = 2
)

// exitError carries the exit status of an error.
type exitError struct {
	code int
	err  error
	// found is what a refusal found (a skip's users, what could not be seen): printed as a table
	// before the error, or within the error's object under -o json and yaml.
	found *usersFound
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// errFailing ends a verb that printed its answer with ExitFailing and nothing more to say.
var errFailing = &exitError{code: ExitFailing, err: errors.New("")}

// clients are the caller's, from their kubeconfig.
type clients struct {
	kube     kubernetes.Interface
	samples  samplesclient.Interface
	images   imageclient.Interface
	template templateclient.Interface
	build    buildclient.Interface
	apps     appsclient.Interface
	config   configclient.Interface
	operator operatorclient.Interface
	project  projectclient.Interface
}

// Client-side rate limits. A user who may not list a kind in all namespaces has it listed
// namespace by namespace (8 kinds x 200 namespaces = 1,600 lists, measured by make
// bench-plugin): at 50 a second that took 19 s. In flight at once are never more than
// 8 kinds x namespaceReaders requests, and the server's priority and fairness shares its
// capacity among clients.
const (
	clientQPS   = 200
	clientBurst = 400
)

func newClients(cfg clientcmd.ClientConfig, timeout time.Duration) (*clients, error) {
	rc, err := cfg.ClientConfig()
	if err != nil {
		return nil, usageErrorf("reading the kubeconfig: %v", err)
	}
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = clientQPS, clientBurst
	rc.Timeout = timeout
	// The deprecation warning of ImageContentSourcePolicy, read on purpose, is not the caller's.
	rc.WarningHandler = rest.NoWarnings{}
	rc.UserAgent = "kubectl-samples"
	c := &clients{}
	for _, mk := range []func() error{
		func() (err error) { c.kube, err = kubernetes.NewForConfig(rc); return },
		func() (err error) { c.samples, err = samplesclient.NewForConfig(rc); return },
		func() (err error) { c.images, err = imageclient.NewForConfig(rc); return },
		func() (err error) { c.template, err = templateclient.NewForConfig(rc); return },
		func() (err error) { c.build, err = buildclient.NewForConfig(rc); return },
		func() (err error) { c.apps, err = appsclient.NewForConfig(rc); return },
		func() (err error) { c.config, err = configclient.NewForConfig(rc); return },
		func() (err error) { c.operator, err = operatorclient.NewForConfig(rc); return },
		func() (err error) { c.project, err = projectclient.NewForConfig(rc); return },
	} {
		if err := mk(); err != nil {
			return nil, usageErrorf("building clients: %v", err)
		}
	}
	return c, nil
}

// requestError turns an error of a request the verb cannot do without into a one-line error
// with ExitUsage: the server could not be reached, the caller is not authenticated or not
// allowed. doing is what the request does, as "read the samples Config" or "update ...".
func requestError(doing string, err error) error {
	var urlErr *url.Error
	var netErr net.Error
	switch {
	case errors.As(err, &urlErr) || errors.As(err, &netErr):
		return usageErrorf("cannot reach the cluster to %s: %v", doing, err)
	case apierrors.IsUnauthorized(err):
		return usageErrorf("the cluster does not accept your credentials (to %s): log in again", doing)
	case apierrors.IsForbidden(err):
		return usageErrorf("you may not %s: %v", doing, err)
	}
	return usageErrorf("could not %s: %v", doing, err)
}
