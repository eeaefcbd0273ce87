package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
)

// copyName names the i-th copy of a sample: the original for 0, "<name>-b<i>" after that.
func copyName(name string, i int) string {
	if i == 0 {
		return name
	}
	return fmt.Sprintf("%s-b%d", name, i)
}

// multiplyInventory writes factor copies of every imagestream and template of inv as an
// inventory directory: dir/archDir/<group>/{imagestreams,templates}/<name>.json, the group taken
// from the file the sample came from. Copy 0 keeps the original names; copy i adds "-b<i>", and
// an imagestream's "<stream>:<tag>" ImageStreamTag references follow the stream's new name so they
// still resolve within it. It returns how many imagestreams and templates it wrote.
func multiplyInventory(inv *inventory.Inventory, factor int, dir, archDir string) (imageStreams, templates int, err error) {
	if factor < 1 {
		return 0, 0, fmt.Errorf("factor %d: must be at least 1", factor)
	}
	for _, name := range inv.ImageStreamNames() {
		file, _ := inv.ImageStreamFile(name)
		for i := range factor {
			is, _ := inv.ImageStream(name)
			renameImageStream(is, copyName(name, i))
			if err := writeSample(dir, archDir, groupOf(file), "imagestreams", is.Name, is); err != nil {
				return imageStreams, templates, err
			}
			imageStreams++
		}
	}
	for _, name := range inv.TemplateNames() {
		file, _ := inv.TemplateFile(name)
		for i := range factor {
			t, _ := inv.Template(name)
			t.Name = copyName(name, i)
			t.APIVersion, t.Kind = "template.openshift.io/v1", "Template"
			if err := writeSample(dir, archDir, groupOf(file), "templates", t.Name, t); err != nil {
				return imageStreams, templates, err
			}
			templates++
		}
	}
	return imageStreams, templates, nil
}

// renameImageStream renames is and its references to its own tags.
func renameImageStream(is *imagev1.ImageStream, name string) {
	old := is.Name
	is.Name = name
	is.APIVersion, is.Kind = "image.openshift.io/v1", "ImageStream"
	for i := range is.Spec.Tags {
		from := is.Spec.Tags[i].From
		if from == nil || from.Kind != "ImageStreamTag" {
			continue
		}
		if stream, tag, ok := strings.Cut(from.Name, ":"); ok && stream == old {
			from.Name = name + ":" + tag
		}
	}
}

// groupOf returns the directory above imagestreams/ or templates/ in an inventory file path.
func groupOf(file string) string {
	group := path.Base(path.Dir(path.Dir(filepath.ToSlash(file))))
	if group == "." || group == "/" || group == "" {
		return "samples"
	}
	return group
}

func writeSample(dir, archDir, group, kindDir, name string, obj any) error {
	target := filepath.Join(dir, archDir, group, kindDir)
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return fmt.Errorf("%s %s: %w", kindDir, name, err)
	}
	return os.WriteFile(filepath.Join(target, name+".json"), data, 0o644)
}
