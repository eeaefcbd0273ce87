// Command etcd runs a single-member etcd on loopback for the local control plane.
// It embeds go.etcd.io/etcd/server/v3 so the project builds etcd from the module proxy
// instead of downloading a release binary.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL (loopback only)")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL (loopback only)")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("--data-dir is required")
	}

	cfg := embed.NewConfig()
	cfg.Name = "local"
	cfg.Dir = *dataDir
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true // a throwaway test store: durability costs seconds per test run
	client := mustURL(*clientURL)
	peer := mustURL(*peerURL)
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("starting etcd: %v", err)
	}
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		server.Close()
		log.Fatal("etcd did not become ready within 60s")
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-signals:
		log.Printf("etcd: %v received, stopping", sig)
	case err := <-server.Err():
		log.Printf("etcd: server error: %v", err)
	}
	// Stopping the server first commits and closes the store. Close alone would first wait up to
	// its request timeout (7 s) for kube-apiserver's watch streams to end, which they never do
	// while kube-apiserver runs: a test that restarts etcd under a live kube-apiserver would wait
	// that long for nothing.
	server.Server.Stop()
	closed := make(chan struct{})
	go func() {
		server.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Second):
		log.Printf("etcd: store closed; client streams still open after 1s are dropped")
	}
}

func mustURL(raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		log.Fatalf("bad URL %q: %v", raw, err)
	}
	return *u
}
