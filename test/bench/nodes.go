package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The operator watches the cluster's Nodes for their architectures (issue 50): on a large
// cluster they are the most numerous objects it caches. The bench's nodes run creates as many
// Node objects as a large cluster has, each the size of what a kubelet reports, before the
// operator starts, and compares the operator's memory with the run without them.

// nodeImages is how many images each Node lists in status.images: a worker node of an
// OpenShift cluster lists some tens (the kubelet reports up to 50).
const nodeImages = 20

// nodeWorkers create the Nodes side by side.
const nodeWorkers = 8

// stormWorkers write the Nodes' status side by side: 83 writes a second at 5,000 Nodes, each
// taking tens of milliseconds on a busy API server.
const stormWorkers = 32

// benchNode is the i-th Node, as a kubelet of an OpenShift worker registers and reports it:
// labels, annotations, taints, capacity, conditions, addresses, nodeInfo and the images it
// holds. One in five is arm64, the others amd64. Serialized it is about 6 KB.
func benchNode(i int) *corev1.Node {
	arch := "amd64"
	if i%5 == 4 {
		arch = "arm64"
	}
	name := benchNodeName(i)
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	// Documentation-range addresses (RFC 2544's benchmarking block): data only, never dialed.
	ip := fmt.Sprintf("198.18.%d.%d", i/250, i%250+1)
	now := metav1.Now()
	var images []corev1.ContainerImage
	for j := range nodeImages {
		repo := fmt.Sprintf("quay.io/openshift-release-dev/ocp-v4.0-art-dev-%02d", j)
		images = append(images, corev1.ContainerImage{
			Names:     []string{repo + "@" + digest(repo), repo + ":4.21"},
			SizeBytes: int64(200+37*j) << 20,
		})
	}
	quantity := resource.MustParse
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: quantity("16"), corev1.ResourceMemory: quantity("65842312Ki"), corev1.ResourceEphemeralStorage: quantity("125293548Ki"),
		corev1.ResourcePods: quantity("250"), "hugepages-1Gi": quantity("0"), "hugepages-2Mi": quantity("0"),
	}
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU: quantity("15500m"), corev1.ResourceMemory: quantity("64691336Ki"), corev1.ResourceEphemeralStorage: quantity("114396791822"),
		corev1.ResourcePods: quantity("250"), "hugepages-1Gi": quantity("0"), "hugepages-2Mi": quantity("0"),
	}
	condition := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"beta.kubernetes.io/arch": arch, "beta.kubernetes.io/os": "linux",
				corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux", corev1.LabelHostname: name,
				"node-role.kubernetes.io/worker": "", "node.openshift.io/os_id": "rhel",
				corev1.LabelInstanceTypeStable: "m6i.4xlarge", "beta.kubernetes.io/instance-type": "m6i.4xlarge",
				corev1.LabelTopologyRegion: "bench-region-1", corev1.LabelTopologyZone: fmt.Sprintf("bench-region-1%c", 'a'+i%3),
			},
			Annotations: map[string]string{
				"machine.openshift.io/machine":                           "openshift-machine-api/" + name,
				"machineconfiguration.openshift.io/controlPlaneTopology": "HighlyAvailable",
				"machineconfiguration.openshift.io/currentConfig":        "rendered-worker-" + digest("worker")[7:39],
				"machineconfiguration.openshift.io/desiredConfig":        "rendered-worker-" + digest("worker")[7:39],
				"machineconfiguration.openshift.io/state":                "Done",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"csi.volume.kubernetes.io/nodeid":                        fmt.Sprintf(`{"ebs.csi.aws.com":"i-%017x"}`, i),
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: fmt.Sprintf("aws:///bench-region-1a/i-%017x", i),
			Taints:     []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now}},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions: []corev1.NodeCondition{
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}, {Type: corev1.NodeInternalDNS, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: digest(name + "machine")[7:39], SystemUUID: digest(name + "uuid")[7:43], BootID: digest(name + "boot")[7:43],
				KernelVersion: "5.14.0-570.42.1.el9_6." + map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[arch],
				OSImage:       "Red Hat Enterprise Linux CoreOS 9.6.20260301-0 (Plow)", ContainerRuntimeVersion: "cri-o://1.34.2-2.rhaos4.21.git1b2c3d4.el9",
				KubeletVersion: "v1.34.2", OperatingSystem: "linux", Architecture: arch,
			},
			Images: images,
		},
	}
}

// benchNodeName is the name of the i-th Node.
func benchNodeName(i int) string { return fmt.Sprintf("worker-%05d.bench.example.com", i) }

// createNodes creates n Nodes (benchNode) as the admin and returns once all exist with their
// status. A create keeps the status it is given; should the server drop it, the status is
// written through the status subresource, as a kubelet does.
func createNodes(ctx context.Context, admin *rest.Config, n int) error {
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 1000, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes := kube.CoreV1().Nodes()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, nodeWorkers)
	for range nodeWorkers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				want := benchNode(i)
				got, err := nodes.Create(ctx, want, metav1.CreateOptions{})
				if err == nil && got.Status.NodeInfo.Architecture == "" {
					got.Status = want.Status
					_, err = nodes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
				}
				if err != nil {
					errs <- fmt.Errorf("node %s: %w", want.Name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// nodeStorm writes the status of each of n Nodes (benchNode) once in every period, spread
// evenly over it, as kubelets reporting once a minute do: the heartbeats of the four
// conditions, by strategic merge patch on the status subresource, as a kubelet writes them. It
// runs until ctx ends and returns how many writes it made and how many failed.
func nodeStorm(ctx context.Context, admin *rest.Config, n int, period time.Duration) (writes, failed int64) {
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 1000, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, 1
	}
	nodes := kube.CoreV1().Nodes()
	next := make(chan int)
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	for range stormWorkers {
		wg.Go(func() {
			for i := range next {
				now := time.Now().UTC().Format(time.RFC3339)
				var conds []string
				for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeReady} {
					conds = append(conds, fmt.Sprintf(`{"type":%q,"lastHeartbeatTime":%q}`, t, now))
				}
				patch := `{"status":{"conditions":[` + strings.Join(conds, ",") + `]}}`
				if _, err := nodes.Patch(ctx, benchNodeName(i), types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
					if ctx.Err() == nil {
						bad.Add(1)
					}
					continue
				}
				ok.Add(1)
			}
		})
	}
	start := time.Now()
	interval := period / time.Duration(n)
feed:
	for k := 0; ; k++ {
		select {
		case <-time.After(time.Until(start.Add(time.Duration(k) * interval))):
		case <-ctx.Done():
			break feed
		}
		select {
		case next <- k % n:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return ok.Load(), bad.Load()
}
