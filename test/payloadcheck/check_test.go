package payloadcheck

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
)

const (
	selfManagedLine = `    include.release.openshift.io/self-managed-high-availability: "true"` + "\n"
	ibmLine         = `    include.release.openshift.io/ibm-cloud-managed: "true"` + "\n"
	bothProfiles    = "  annotations:\n" + ibmLine + selfManagedLine
	deleteLine      = `    release.openshift.io/delete: "true"` + "\n"
)

func deployment(profile string, masters bool) string {
	sched := ""
	if masters {
		sched = `      nodeSelector:
        node-role.kubernetes.io/master: ""
      tolerations:
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
`
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
  annotations:
` + profile + `spec:
  replicas: 1
  selector:
    matchLabels:
      name: cluster-samples-operator
  template:
    metadata:
      labels:
        name: cluster-samples-operator
    spec:
      serviceAccountName: cluster-samples-operator
` + sched + `      containers:
      - name: operator
        image: quay.io/x/operator:1
      volumes:
      - name: tls
        secret:
          secretName: samples-operator-tls
`
}

// fixture is a small payload that breaks no rule, as file name -> content.
func fixture() map[string]string {
	return map[string]string{
		"00-crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: configs.samples.operator.openshift.io
` + bothProfiles + `spec:
  group: samples.operator.openshift.io
  names: {kind: Config, plural: configs}
  scope: Cluster
`,
		"01-namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: openshift-cluster-samples-operator
` + bothProfiles,
		"02-sa.yaml": `apiVersion: v1
kind: ServiceAccount
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + bothProfiles,
		"03-clusterrole.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-samples-operator
` + bothProfiles + `rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-samples-operator
` + bothProfiles + `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-samples-operator}
subjects:
- {kind: ServiceAccount, name: cluster-samples-operator, namespace: openshift-cluster-samples-operator}
`,
		"03-role.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + bothProfiles + `rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + bothProfiles + `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cluster-samples-operator}
subjects:
- {kind: ServiceAccount, name: cluster-samples-operator}
---
# The built-in edit role, in a namespace the payload does not define: the cluster's, not checked.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: cluster-samples-operator-edit
  namespace: openshift
` + bothProfiles + `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects:
- {kind: ServiceAccount, name: cluster-samples-operator, namespace: openshift-cluster-samples-operator}
`,
		"06-operator.yaml":     deployment("    capability.openshift.io/name: openshift-samples\n"+selfManagedLine, true),
		"06-operator-ibm.yaml": deployment("    capability.openshift.io/name: openshift-samples\n"+ibmLine, false),
		"06-networkpolicy.yaml": `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: metrics
  namespace: openshift-cluster-samples-operator
` + bothProfiles + `spec:
  podSelector:
    matchLabels: {name: cluster-samples-operator}
  policyTypes: [Ingress]
  ingress:
  - from:
    - namespaceSelector:
        matchLabels: {kubernetes.io/metadata.name: openshift-monitoring}
    ports:
    - {protocol: TCP, port: 60000}
`,
		"06-service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: metrics
  namespace: openshift-cluster-samples-operator
  labels:
    name: cluster-samples-operator
` + bothProfiles + `    service.beta.openshift.io/serving-cert-secret-name: samples-operator-tls
spec:
  ports:
  - port: 60000
`,
		"06-servicemonitor.yaml": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: cluster-samples-operator
  namespace: openshift-cluster-samples-operator
` + bothProfiles + `spec:
  selector:
    matchLabels:
      name: cluster-samples-operator
`,
		"07-clusteroperator.yaml": `apiVersion: config.openshift.io/v1
kind: ClusterOperator
metadata:
  name: openshift-samples
` + bothProfiles + `spec: {}
`,
		"08-imagestreams.yaml": `apiVersion: image.openshift.io/v1
kind: ImageStream
metadata:
  name: tools
  namespace: openshift
` + bothProfiles + `spec:
  tags:
  - name: latest
    from:
      kind: DockerImage
      name: quay.io/x/tools:1
`,
		"09-config.yaml": `apiVersion: samples.operator.openshift.io/v1
kind: Config
metadata:
  name: cluster
` + bothProfiles + `spec:
  managementState: Managed
`,
		"10-cleanup.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: old-grant
` + bothProfiles + deleteLine,
		payload.ImageReferencesFile: `kind: ImageStream
apiVersion: image.openshift.io/v1
spec:
  tags:
  - name: cluster-samples-operator
    from:
      kind: DockerImage
      name: quay.io/x/operator:1
  - name: tools
    from:
      kind: DockerImage
      name: quay.io/x/tools:1
`,
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

// replace edits file f of the fixture, failing the test when old is not there (a fixture
// that no longer holds what a case breaks would pass for the wrong reason).
func replace(t *testing.T, files map[string]string, f, old, new string) {
	t.Helper()
	if !strings.Contains(files[f], old) {
		t.Fatalf("%s does not contain %q", f, old)
	}
	files[f] = strings.Replace(files[f], old, new, 1)
}

func TestFixturePasses(t *testing.T) {
	if err := Check(mapFS(fixture())); err != nil {
		t.Fatal(err)
	}
}

// Every rule fails on a fixture that breaks it, with an error that names the file, the object
// and what is wrong.
func TestCheckFails(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(t *testing.T, f map[string]string)
		want []string
	}{
		// a. images
		"container image not in image-references": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator.yaml", "quay.io/x/operator:1", "quay.io/x/operator:2")
				replace(t, f, "06-operator-ibm.yaml", "quay.io/x/operator:1", "quay.io/x/operator:2")
			},
			want: []string{"Deployment openshift-cluster-samples-operator/cluster-samples-operator (06-operator.yaml): spec.template.spec.containers[0].image quay.io/x/operator:2 is not a from.name of image-references"},
		},
		"init container image not in image-references": {
			edit: func(t *testing.T, f map[string]string) {
				for _, file := range []string{"06-operator.yaml", "06-operator-ibm.yaml"} {
					replace(t, f, file, "      containers:\n", "      initContainers:\n      - name: init\n        image: quay.io/x/init:1\n      containers:\n")
				}
			},
			want: []string{"(06-operator-ibm.yaml): spec.template.spec.initContainers[0].image quay.io/x/init:1 is not a from.name"},
		},
		"image of another kind not in image-references": {
			edit: func(t *testing.T, f map[string]string) {
				f["11-job.yaml"] = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: once\n" + bothProfiles +
					"spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: quay.io/x/once:1\n"
			},
			want: []string{"Job once (11-job.yaml): spec.template.spec.containers[0].image quay.io/x/once:1 is not a from.name"},
		},
		"imagestream tag not in image-references": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "08-imagestreams.yaml", "quay.io/x/tools:1", "quay.io/x/tools:2")
			},
			want: []string{"ImageStream openshift/tools (08-imagestreams.yaml): spec.tags[0].from.name quay.io/x/tools:2 is not a from.name"},
		},
		"image-references names an image twice": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, payload.ImageReferencesFile, "quay.io/x/tools:1", "quay.io/x/operator:1")
			},
			want: []string{"image-references: image quay.io/x/operator:1 is listed under two tags"},
		},
		"image-references tag not a DockerImage": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, payload.ImageReferencesFile, "kind: DockerImage\n      name: quay.io/x/tools:1", "kind: ImageStreamTag\n      name: tools:1")
			},
			want: []string{"image-references: tag tools must be from a DockerImage"},
		},

		// b. one operator Deployment per profile of the ClusterOperator
		"profile without an operator Deployment": {
			edit: func(t *testing.T, f map[string]string) { delete(f, "06-operator-ibm.yaml") },
			want: []string{"ClusterOperator openshift-samples (07-clusteroperator.yaml) is in profile ibm-cloud-managed, which has 0 Deployments openshift-cluster-samples-operator/cluster-samples-operator; it needs exactly one"},
		},
		"profile with two operator Deployments": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator-ibm.yaml", ibmLine, ibmLine+selfManagedLine)
			},
			want: []string{"is in profile self-managed-high-availability, which has 2 Deployments openshift-cluster-samples-operator/cluster-samples-operator (06-operator-ibm.yaml, 06-operator.yaml)"},
		},
		"operator Deployment in a profile the ClusterOperator is not in": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator-ibm.yaml", ibmLine, ibmLine+`    include.release.openshift.io/single-node-developer: "true"`+"\n")
			},
			want: []string{"Deployment openshift-cluster-samples-operator/cluster-samples-operator (06-operator-ibm.yaml) is in profile single-node-developer, but ClusterOperator openshift-samples (07-clusteroperator.yaml) is not"},
		},
		"no ClusterOperator": {
			edit: func(t *testing.T, f map[string]string) { delete(f, "07-clusteroperator.yaml") },
			want: []string{"no ClusterOperator openshift-samples in manifests/"},
		},

		// The profiles' Deployments are the same but for scheduling on control-plane nodes.
		"profile Deployments differ": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator-ibm.yaml", "replicas: 1", "replicas: 2")
			},
			want: []string{"Deployment openshift-cluster-samples-operator/cluster-samples-operator (06-operator-ibm.yaml) differs from the one in 06-operator.yaml at spec.replicas"},
		},
		"profile Deployments differ in a container": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator-ibm.yaml", "      - name: operator\n", "      - name: operator\n        args: [--debug]\n")
			},
			want: []string{"(06-operator-ibm.yaml) differs from the one in 06-operator.yaml at spec.template.spec.containers[0].args"},
		},
		"ibm-cloud-managed Deployment tolerates masters": {
			edit: func(t *testing.T, f map[string]string) {
				f["06-operator-ibm.yaml"] = deployment(ibmLine, true)
			},
			want: []string{"(06-operator-ibm.yaml) is in profile ibm-cloud-managed, whose clusters have no control-plane nodes, but selects or tolerates node-role.kubernetes.io/master"},
		},

		// c. an object's profiles are also those of what it needs
		"Namespace not in a profile of its objects": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "01-namespace.yaml", ibmLine, "") },
			want: []string{
				"ServiceAccount openshift-cluster-samples-operator/cluster-samples-operator (02-sa.yaml) is in profile ibm-cloud-managed but Namespace openshift-cluster-samples-operator, which it needs (its namespace), is not: add include.release.openshift.io/ibm-cloud-managed: \"true\" to 01-namespace.yaml",
			},
		},
		"ServiceAccount not in a profile of its Deployment": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "02-sa.yaml", ibmLine, "") },
			want: []string{
				"(06-operator-ibm.yaml) is in profile ibm-cloud-managed but ServiceAccount openshift-cluster-samples-operator/cluster-samples-operator, which it needs (the service account it runs as), is not",
				"RoleBinding openshift-cluster-samples-operator/cluster-samples-operator (03-role.yaml) is in profile ibm-cloud-managed but ServiceAccount openshift-cluster-samples-operator/cluster-samples-operator, which it needs (a subject)",
			},
		},
		"ClusterRole not in a profile of its binding": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "03-clusterrole.yaml", ibmLine, "") },
			want: []string{"ClusterRoleBinding cluster-samples-operator (03-clusterrole.yaml) is in profile ibm-cloud-managed but ClusterRole cluster-samples-operator, which it needs (its roleRef), is not"},
		},
		// g. the metrics port's NetworkPolicy
		"no NetworkPolicy in a profile": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "06-networkpolicy.yaml", ibmLine, "") },
			want: []string{"profile ibm-cloud-managed: no NetworkPolicy in openshift-cluster-samples-operator admits only openshift-monitoring to port 60000 of the operator's pods (labels name=cluster-samples-operator)"},
		},
		"NetworkPolicy selects other pods": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "{name: cluster-samples-operator}", "{name: something-else}")
			},
			want: []string{"does not select the operator's pods alone (podSelector name=something-else)"},
		},
		"NetworkPolicy selects every pod": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "matchLabels: {name: cluster-samples-operator}", "{}")
			},
			want: []string{"does not select the operator's pods alone"},
		},
		"NetworkPolicy admits every namespace": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "matchLabels: {kubernetes.io/metadata.name: openshift-monitoring}", "{}")
			},
			want: []string{"want openshift-monitoring alone"},
		},
		"NetworkPolicy admits another port": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "    - {protocol: TCP, port: 60000}\n", "    - {protocol: TCP, port: 60000}\n    - {protocol: TCP, port: 8080}\n")
			},
			want: []string{"want TCP 60000 alone"},
		},
		"NetworkPolicy restricts egress": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "policyTypes: [Ingress]", "policyTypes: [Ingress, Egress]")
			},
			want: []string{"restricts egress"},
		},
		"NetworkPolicy does not restrict ingress": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-networkpolicy.yaml", "policyTypes: [Ingress]", "policyTypes: []")
			},
			want: []string{"policyTypes lacks Ingress"},
		},
		// h. the probes, off the metrics port
		"probe on the metrics port by name": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator.yaml", "        image: quay.io/x/operator:1\n",
					"        image: quay.io/x/operator:1\n        ports:\n        - {name: metrics, containerPort: 60000}\n        - {name: health, containerPort: 8081}\n"+
						"        livenessProbe: {httpGet: {path: /healthz, port: health}}\n        readinessProbe: {httpGet: {path: /readyz, port: metrics, scheme: HTTPS}}\n")
			},
			want: []string{"(06-operator.yaml): container operator's readinessProbe is on the metrics port 60000"},
		},
		"probe on the metrics port by number": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "06-operator-ibm.yaml", "        image: quay.io/x/operator:1\n",
					"        image: quay.io/x/operator:1\n        livenessProbe: {tcpSocket: {port: 60000}}\n")
			},
			want: []string{"(06-operator-ibm.yaml): container operator's livenessProbe is on the metrics port 60000"},
		},
		"Role not in a profile of its binding": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "03-role.yaml", selfManagedLine, "") },
			want: []string{"RoleBinding openshift-cluster-samples-operator/cluster-samples-operator (03-role.yaml) is in profile self-managed-high-availability but Role openshift-cluster-samples-operator/cluster-samples-operator, which it needs (its roleRef), is not"},
		},
		"Service not in a profile of its ServiceMonitor and Deployment": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "06-service.yaml", ibmLine, "") },
			want: []string{
				"ServiceMonitor openshift-cluster-samples-operator/cluster-samples-operator (06-servicemonitor.yaml) is in profile ibm-cloud-managed but Service openshift-cluster-samples-operator/metrics, which it needs (the Service it scrapes), is not",
				"(06-operator-ibm.yaml) is in profile ibm-cloud-managed but Service openshift-cluster-samples-operator/metrics, which it needs (its serving certificate secret samples-operator-tls is a volume), is not",
			},
		},
		"CRD not in a profile of the Config": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "00-crd.yaml", ibmLine, "") },
			want: []string{"Config cluster (09-config.yaml) is in profile ibm-cloud-managed but CustomResourceDefinition configs.samples.operator.openshift.io, which it needs (the definition of its kind), is not"},
		},
		"object in no profile": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "08-imagestreams.yaml", bothProfiles, "") },
			want: []string{"ImageStream openshift/tools (08-imagestreams.yaml) is in no cluster profile"},
		},
		"deleted object not in every profile": {
			edit: func(t *testing.T, f map[string]string) { replace(t, f, "10-cleanup.yaml", ibmLine, "") },
			want: []string{"ClusterRole old-grant (10-cleanup.yaml) is deleted by the payload but is not in profile ibm-cloud-managed"},
		},
		"object needs a deleted object": {
			edit: func(t *testing.T, f map[string]string) {
				replace(t, f, "03-clusterrole.yaml", "kind: ClusterRole, name: cluster-samples-operator}", "kind: ClusterRole, name: old-grant}")
			},
			want: []string{"ClusterRoleBinding cluster-samples-operator (03-clusterrole.yaml) needs ClusterRole old-grant (its roleRef), which the payload deletes"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			files := fixture()
			tc.edit(t, files)
			err := Check(mapFS(files))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nwant one containing\n%s", err, w)
				}
			}
		})
	}
}

// A deleted object needs nothing: the profiles of what it refers to do not matter.
func TestDeletedObjectsNeedNothing(t *testing.T) {
	files := fixture()
	files["10-cleanup.yaml"] += `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: old-grant
` + bothProfiles + deleteLine + `roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: old-grant}
subjects:
- {kind: ServiceAccount, name: cluster-samples-operator, namespace: openshift-cluster-samples-operator}
`
	replace(t, files, "02-sa.yaml", ibmLine, "")
	err := Check(mapFS(files))
	if err == nil || strings.Contains(err.Error(), "ClusterRoleBinding old-grant") {
		t.Errorf("error %v, want one about ServiceAccount's profiles but not about ClusterRoleBinding old-grant", err)
	}
}

func TestOperatorImage(t *testing.T) {
	files := fixture()
	refs, err := payload.ReadImageReferences(mapFS(files))
	if err != nil {
		t.Fatal(err)
	}
	if img, err := payload.OperatorImage(refs); err != nil || img != "quay.io/x/operator:1" {
		t.Errorf("OperatorImage = %q, %v", img, err)
	}
	if _, err := payload.OperatorImage(refs[1:]); err == nil || !strings.Contains(err.Error(), "image-references has no tag cluster-samples-operator") {
		t.Errorf("without the operator's tag: %v", err)
	}
}

// The real manifests/ breaks no rule.
func TestManifestsPass(t *testing.T) {
	if err := Check(os.DirFS("../../manifests")); err != nil {
		t.Fatal(err)
	}
}
