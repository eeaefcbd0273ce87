// Package inventorytest builds inventories for tests and benchmarks; the operator's binary never
// links it.
package inventorytest

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing/fstest"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// Scaled is the embedded x86_64 inventory with factor copies of each sample, as `make bench`
// installs it at 10x: copy 0 keeps its name, copy i is "<name>-b<i>", and a copied stream's tags
// that follow another of its tags follow the copy's. For benchmarks of what grows with the
// inventory.
func Scaled(factor int) (*inventory.Inventory, error) {
	orig, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{}
	put := func(file, kind, name string, obj any) error {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		group := path.Base(path.Dir(path.Dir(file)))
		fsys[path.Join("x", group, kind, name+".json")] = &fstest.MapFile{Data: data}
		return nil
	}
	copyOf := func(name string, i int) string {
		if i == 0 {
			return name
		}
		return fmt.Sprintf("%s-b%d", name, i)
	}
	for _, name := range orig.ImageStreamNames() {
		file, _ := orig.ImageStreamFile(name)
		for i := range factor {
			is, _ := orig.ImageStream(name)
			is.Name, is.APIVersion, is.Kind = copyOf(name, i), "image.openshift.io/v1", "ImageStream"
			for _, tag := range is.Spec.Tags {
				if tag.From != nil && tag.From.Kind == "ImageStreamTag" && strings.HasPrefix(tag.From.Name, name+":") {
					tag.From.Name = is.Name + strings.TrimPrefix(tag.From.Name, name)
				}
			}
			if err := put(file, "imagestreams", is.Name, is); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range orig.TemplateNames() {
		file, _ := orig.TemplateFile(name)
		for i := range factor {
			t, _ := orig.Template(name)
			t.Name, t.APIVersion, t.Kind = copyOf(name, i), "template.openshift.io/v1", "Template"
			if err := put(file, "templates", t.Name, t); err != nil {
				return nil, err
			}
		}
	}
	return inventory.Load(fsys, "x")
}
