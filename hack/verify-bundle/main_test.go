package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

// committed is the bundle `make bundle` writes and the repository keeps.
const committed = "../../bundle"

const csvFile = "manifests/cluster-samples-operator.clusterserviceversion.yaml"

func TestCommittedBundlePasses(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--k8s-version", "1.35", committed}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d for the committed bundle:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "valid") {
		t.Errorf("stdout %q", stdout.String())
	}
	// The development bundle names images by tag, so it must not claim disconnected support;
	// the check below would pass vacuously otherwise.
	if got := readCSV(t, committed)["metadata"].(map[string]any)["annotations"].(map[string]any)[featurePrefix+"disconnected"]; got != "false" {
		t.Errorf("the committed bundle declares disconnected %v, want \"false\" (its images are tags)", got)
	}
}

// Each fixture is the committed bundle with its CSV changed; want are the problems it must
// report (substrings), none for a bundle that must pass. Warnings fail as errors do.
func TestFixtures(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(t *testing.T, csv map[string]any)
		want []string
		more bool // other problems than want allowed
	}{
		"no provider": {
			edit: func(_ *testing.T, csv map[string]any) { delete(spec(csv), "provider") },
			want: []string{"Error: Value : (cluster-samples-operator.v0.0.1-snapshot) csv.Spec.Provider.Name not specified"},
		},
		"no icon, a warning only": {
			edit: func(_ *testing.T, csv map[string]any) { delete(spec(csv), "icon") },
			want: []string{"Warning: Value : (cluster-samples-operator.v0.0.1-snapshot) csv.Spec.Icon not specified"},
		},
		"skipRange not a range": {
			edit: func(_ *testing.T, csv map[string]any) { annotations(csv)["olm.skipRange"] = "< 1.2.x.y" },
			want: []string{`annotation olm.skipRange "< 1.2.x.y": `},
		},
		"skipRange holding the version": {
			edit: func(_ *testing.T, csv map[string]any) { annotations(csv)["olm.skipRange"] = ">=0.0.0" },
			want: []string{`annotation olm.skipRange ">=0.0.0" holds the CSV's own version 0.0.1-snapshot`},
		},
		"no minKubeVersion": {
			edit: func(_ *testing.T, csv map[string]any) { delete(spec(csv), "minKubeVersion") },
			want: []string{"csv.Spec.minKubeVersion is not informed"},
		},
		"unknown category": {
			edit: func(_ *testing.T, csv map[string]any) { annotations(csv)["categories"] = "Samples" },
			want: []string{`value "Samples" is not in the set of standard categories`},
		},
		"feature missing and not boolean": {
			edit: func(_ *testing.T, csv map[string]any) {
				delete(annotations(csv), featurePrefix+"csi")
				annotations(csv)[featurePrefix+"cnf"] = "no"
			},
			want: []string{
				"annotation features.operators.openshift.io/csi is missing",
				`annotation features.operators.openshift.io/cnf is "no", not "true" or "false"`,
			},
		},
		"disconnected with tags": {
			edit: func(_ *testing.T, csv map[string]any) { annotations(csv)[featurePrefix+"disconnected"] = "true" },
			want: []string{
				`but relatedImages "operator" is "quay.io/openshift/origin-cluster-samples-operator:latest"`,
				`but annotation containerImage is "quay.io/openshift/origin-cluster-samples-operator:latest"`,
				`but deployment cluster-samples-operator container cluster-samples-operator image is`,
				`but deployment cluster-samples-operator container cluster-samples-operator env RELATED_IMAGE_OPERATOR is`,
				`but relatedImages "ubi9-ruby-33-latest" is "registry.redhat.io/ubi9/ruby-33:latest"`,
			},
			more: true, // every other related image
		},
		"disconnected, every image a digest": {
			edit: func(t *testing.T, csv map[string]any) {
				pinAll(t, csv, "")
				annotations(csv)[featurePrefix+"disconnected"] = "true"
			},
		},
		"disconnected, one related image left a tag": {
			edit: func(t *testing.T, csv map[string]any) {
				pinAll(t, csv, "registry.redhat.io/ubi9/ruby-33:latest")
				annotations(csv)[featurePrefix+"disconnected"] = "true"
			},
			want: []string{`but relatedImages "ubi9-ruby-33-latest" is "registry.redhat.io/ubi9/ruby-33:latest", not a sha256 digest reference`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyBundle(t)
			csv := readCSV(t, dir)
			tc.edit(t, csv)
			writeCSV(t, dir, csv)

			problems, err := verify(dir, "1.35")
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) != len(tc.want) && !(tc.more && len(problems) > len(tc.want)) {
				t.Errorf("%d problems, want %d:\n%s", len(problems), len(tc.want), strings.Join(problems, "\n"))
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(problems, "\n"), w) {
					t.Errorf("no problem says %q in:\n%s", w, strings.Join(problems, "\n"))
				}
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{dir}, &stdout, &stderr)
			if wantCode := map[bool]int{true: 0, false: 1}[len(tc.want) == 0]; code != wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, wantCode, stderr.String())
			}
		})
	}
}

func TestUnloadableAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{t.TempDir()}, &stdout, &stderr); code != 1 {
		t.Errorf("an empty directory: exit %d, want 1", code)
	}
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("no directory: exit %d, stderr %q", code, stderr.String())
	}
}

func spec(csv map[string]any) map[string]any { return csv["spec"].(map[string]any) }

func annotations(csv map[string]any) map[string]any {
	return csv["metadata"].(map[string]any)["annotations"].(map[string]any)
}

// pinAll replaces every image reference of the CSV, wherever it is, by a made-up digest of
// the same repository, except keep.
func pinAll(t *testing.T, csv map[string]any, keep string) {
	t.Helper()
	data, err := yaml.Marshal(csv)
	if err != nil {
		t.Fatal(err)
	}
	typed := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(data, typed); err != nil {
		t.Fatal(err)
	}
	pinned := map[string]string{}
	for _, ref := range images(typed) {
		if ref.image == keep {
			continue
		}
		repo := ref.image
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		pinned[ref.image] = fmt.Sprintf("%s@sha256:%x", repo, sha256.Sum256([]byte(ref.image)))
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		case string:
			if p, ok := pinned[v]; ok {
				return p
			}
		}
		return v
	}
	walk(csv)
}

func copyBundle(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(committed, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(committed, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func readCSV(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, csvFile))
	if err != nil {
		t.Fatal(err)
	}
	var csv map[string]any
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}
	return csv
}

func writeCSV(t *testing.T, dir string, csv map[string]any) {
	t.Helper()
	data, err := yaml.Marshal(csv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, csvFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
