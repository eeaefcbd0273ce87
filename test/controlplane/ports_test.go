package controlplane

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skipf("no ephemeral range to compare with: %v", err)
	}
	fields := strings.Fields(string(data))
	lo, _ := strconv.Atoi(fields[0])
	hi, _ := strconv.Atoi(fields[1])
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port >= lo && port <= hi {
			t.Fatalf("FreePort gave %d, inside the ephemeral range %d-%d that outgoing connections draw from", port, lo, hi)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("FreePort gave %d, which cannot be bound: %v", port, err)
		}
		l.Close()
	}
}

// Another server can bind a port between the moment it is chosen and etcd's start (CI once
// lost a control plane that way): the start is retried on new ports.
func TestStartRetriesOnFreshPortsWhenAPortWasTaken(t *testing.T) {
	t.Parallel()
	squatter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer squatter.Close()
	var mu sync.Mutex
	picks := 0
	pickPort := func() (int, error) {
		mu.Lock()
		defer mu.Unlock()
		picks++
		if picks == 1 { // etcd's client port, on the first attempt only
			return squatter.Addr().(*net.TCPAddr).Port, nil
		}
		return FreePort()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := start(ctx, Options{StandIns: true}, pickPort)
	if err != nil {
		t.Fatalf("start with etcd's first port taken: %v", err)
	}
	defer cp.Stop()
	if cp.apiserverReady() != true {
		t.Error("kube-apiserver is not ready after the retried start")
	}
	if picks <= 3 {
		t.Errorf("%d ports picked; want a second round after the first three", picks)
	}
	etcdLog, err := os.ReadFile(filepath.Join(cp.Dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(etcdLog), "address already in use") {
		t.Error("etcd.log does not show the first attempt failing on the taken port: the test did not test the retry")
	}
	if strings.Contains(cp.etcdURL, ":"+strconv.Itoa(squatter.Addr().(*net.TCPAddr).Port)) {
		t.Errorf("etcd still uses the taken port: %s", cp.etcdURL)
	}
}
