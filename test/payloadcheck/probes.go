package payloadcheck

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

// CheckProbesOffTheMetricsPort reports a probe of the operator's Deployment served on
// MetricsPort: every client of the metrics port (a flood of connections from any pod the
// NetworkPolicy admits, or from anywhere where none applies) could crowd it out, and the
// kubelet would restart a working operator. The probes belong on the health listener
// (--health-probe-bind-address).
func CheckProbesOffTheMetricsPort(objs []payload.Object) []error {
	var errs []error
	for _, o := range objs {
		if !isOperatorDeployment(o) {
			continue
		}
		var d appsv1.Deployment
		if err := o.Decode(&d); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o, err))
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for kind, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
				if port, ok := probePort(c, p); ok && port == MetricsPort {
					errs = append(errs, fmt.Errorf("%s: container %s's %s is on the metrics port %d, where metrics clients can crowd it out; probe the health port", o, c.Name, kind, MetricsPort))
				}
			}
		}
	}
	return errs
}

// probePort is the container port number an HTTP or TCP probe connects to, by number or by
// the name of one of the container's ports.
func probePort(c corev1.Container, p *corev1.Probe) (int, bool) {
	var port intstr.IntOrString
	switch {
	case p == nil:
		return 0, false
	case p.HTTPGet != nil:
		port = p.HTTPGet.Port
	case p.TCPSocket != nil:
		port = p.TCPSocket.Port
	default:
		return 0, false
	}
	if port.Type == intstr.Int {
		return port.IntValue(), true
	}
	for _, cp := range c.Ports {
		if cp.Name == port.StrVal {
			return int(cp.ContainerPort), true
		}
	}
	return 0, false
}
