package importallow

import (
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
)

// InsecureRepositoryAnnotation marks an imagestream whose every reference may be pulled without
// TLS (openshift/api image/v1 InsecureRepositoryAnnotation).
const InsecureRepositoryAnnotation = imagev1.InsecureRepositoryAnnotation

// RefusedRegistry returns, when openshift-apiserver would refuse to store the imagestream want
// under the cluster's import allow-list, the registry of the first reference it refuses and the
// server's reason; "" when it would store it. The server checks spec.dockerImageRepository and
// the reference of each DockerImage tag (an insecure tag's, or any of a stream annotated
// InsecureRepositoryAnnotation, with either port). For an update of
// an installed stream pass allow.ForUpdateOf(live): the server admits there the repositories the
// stream already names.
func RefusedRegistry(want *imagev1.ImageStream, allow *List) (registry string, reason error) {
	if !allow.Restricted() {
		return "", nil
	}
	// A stream annotated as an insecure repository has all its references pulled over either
	// transport, as the server's validation takes it.
	insecureRepository := want.Annotations[InsecureRepositoryAnnotation] == "true"
	repoTransport := Secure
	if insecureRepository {
		repoTransport = Any
	}
	if repo := want.Spec.DockerImageRepository; repo != "" {
		if err := allow.AdmitPullSpec(repo, repoTransport); err != nil {
			return registryOf(repo), err
		}
	}
	for _, tag := range want.Spec.Tags {
		if tag.From == nil || tag.From.Kind != "DockerImage" {
			continue
		}
		t := Secure
		if tag.ImportPolicy.Insecure || insecureRepository {
			t = Any
		}
		if err := allow.AdmitPullSpec(tag.From.Name, t); err != nil {
			return registryOf(tag.From.Name), fmt.Errorf("tag %s: %w", tag.Name, err)
		}
	}
	return "", nil
}

// registryOf is the registry part of a pull spec as the server parses it ("" for none).
func registryOf(ref string) string {
	parsed, err := reference.Parse(ref)
	if err != nil {
		return ""
	}
	return parsed.Registry
}
