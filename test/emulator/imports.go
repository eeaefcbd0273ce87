package emulator

import (
	"context"
	"encoding/json"
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
	imagescheme "github.com/openshift/client-go/image/clientset/versioned/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// importsResource is the plural of ImageStreamImport in image.openshift.io/v1.
const importsResource = "imagestreamimports"

// importSource is where ImageStreamImport objects come from and how processed
// ones are removed. Real OpenShift never stores them, so openshift/client-go
// offers neither a list type, nor list/watch/delete verbs, nor an informer.
type importSource struct {
	lw     cache.ListerWatcher
	remove func(ctx context.Context, name string, uid types.UID) error
}

// imageStreamImportList is the list kind served for the CRD-backed
// ImageStreamImport resource; openshift/api has no such type.
type imageStreamImportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []imagev1.ImageStreamImport `json:"items"`
}

func (l *imageStreamImportList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &imageStreamImportList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]imagev1.ImageStreamImport, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// restImportSource lists, watches and deletes ImageStreamImports through the
// REST client of the typed image client (same base path, credentials and
// codecs). It returns nil when the client has no usable REST client, as with
// the fake clientset.
func restImportSource(rc rest.Interface, namespace string) *importSource {
	if rc == nil {
		return nil
	}
	if c, ok := rc.(*rest.RESTClient); ok && c == nil {
		return nil
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			body, err := rc.Get().
				Namespace(namespace).
				Resource(importsResource).
				VersionedParams(&opts, imagescheme.ParameterCodec).
				Do(ctx).
				Raw()
			if err != nil {
				return nil, err
			}
			list := &imageStreamImportList{}
			if err := json.Unmarshal(body, list); err != nil {
				return nil, fmt.Errorf("decoding %s list: %w", importsResource, err)
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			// Watch events carry apiVersion/kind, which the image scheme of the
			// REST client decodes into *imagev1.ImageStreamImport.
			return rc.Get().
				Namespace(namespace).
				Resource(importsResource).
				VersionedParams(&opts, imagescheme.ParameterCodec).
				Watch(ctx)
		},
	}
	remove := func(ctx context.Context, name string, uid types.UID) error {
		opts := metav1.DeleteOptions{}
		if uid != "" {
			// Never delete a newer object that reuses the name.
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		return rc.Delete().
			Namespace(namespace).
			Resource(importsResource).
			Name(name).
			Body(&opts).
			Do(ctx).
			Error()
	}
	return &importSource{lw: lw, remove: remove}
}

// importRequests maps the tags an ImageStreamImport asks for to the
// references to import them from, and to the import policies it asks with.
// Entries that are not DockerImage references are ignored; an entry without
// "to" targets the tag its reference names.
func importRequests(isi *imagev1.ImageStreamImport) (refs map[string]string, policies map[string]imagev1.TagImportPolicy) {
	refs, policies = map[string]string{}, map[string]imagev1.TagImportPolicy{}
	for _, img := range isi.Spec.Images {
		if img.From.Name == "" || (img.From.Kind != "" && img.From.Kind != kindDockerImage) {
			continue
		}
		tag := ""
		if img.To != nil {
			tag = img.To.Name
		}
		if tag == "" {
			tag = defaultTag(img.From.Name)
		}
		refs[tag] = img.From.Name
		policies[tag] = img.ImportPolicy
	}
	return refs, policies
}
