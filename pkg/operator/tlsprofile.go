package operator

import (
	"reflect"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/metrics"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/tlsprofile"
)

// followTLSProfile keeps the metrics server on the cluster's TLS profile
// (apiservers.config.openshift.io cluster): every replica serves metrics, so this runs in every
// replica, from the informer's events, not in a leader-only controller. Cipher names Go cannot use
// are left out and reported once; a profile left with nothing usable is reported and leaves the
// server on the profile it had.
func followTLSProfile(informer configinformers.APIServerInformer, server *metrics.Server, recorder events.Recorder) error {
	apply := func(profile *configv1.TLSSecurityProfile) {
		settings, err := tlsprofile.FromProfile(profile)
		if err != nil {
			klog.ErrorS(err, "The cluster TLS profile cannot be applied to the metrics server; it keeps the profile in force", "inForce", server.TLS().String())
			recorder.Warningf("TLSProfileInvalid", "apiservers.config.openshift.io/cluster spec.tlsSecurityProfile cannot be applied to the metrics server (%v); it keeps %s", err, server.TLS())
			return
		}
		if reflect.DeepEqual(settings, server.TLS()) {
			return
		}
		server.SetTLS(settings)
		klog.InfoS("The metrics server follows the cluster TLS profile", "profile", settings.String())
		if len(settings.Ignored) > 0 {
			// Said once per profile change: an unchanged profile returns above.
			recorder.Warningf("TLSProfileCiphersIgnored", "apiservers.config.openshift.io/cluster spec.tlsSecurityProfile names ciphers Go cannot use (%s): the metrics server applies the rest, %s",
				strings.Join(settings.Ignored, ", "), settings)
		}
	}
	profileOf := func(obj interface{}) *configv1.TLSSecurityProfile {
		if a, ok := obj.(*configv1.APIServer); ok {
			return a.Spec.TLSSecurityProfile
		}
		return nil
	}
	klog.InfoS("The metrics server uses the default TLS profile until it reads the cluster's", "profile", server.TLS().String())
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { apply(profileOf(obj)) },
		UpdateFunc: func(_, obj interface{}) { apply(profileOf(obj)) },
		// Without the object the API servers use the default profile, and so does the server.
		DeleteFunc: func(interface{}) { apply(nil) },
	})
	return err
}
