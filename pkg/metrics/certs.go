package metrics

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// certFiles serves a certificate and key from files and reloads them when either file changes.
// The service CA rotates the serving secret, and the kubelet swaps the mounted files in place;
// checking the files' size and modification time on each handshake (two stats) is cheap next to
// the handshake itself and needs no watcher.
type certFiles struct {
	certFile, keyFile string

	mu      sync.Mutex
	stamp   [2]fileStamp
	current *tls.Certificate
	// bad is the stamp of the files when they last failed to load (failing): they are neither
	// loaded nor reported again on every handshake until they change. warnings counts reports.
	failing  bool
	bad      [2]fileStamp
	warnings int
}

type fileStamp struct {
	size    int64
	modTime time.Time
}

func newCertFiles(certFile, keyFile string) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile}
	if _, err := c.get(); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate is a tls.Config.GetCertificate.
func (c *certFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.get()
}

func (c *certFiles) get() (*tls.Certificate, error) {
	stamp, err := c.stat()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.current != nil && (stamp == c.stamp || c.failing && stamp == c.bad) {
		return c.current, nil
	}
	if err == nil {
		var cert tls.Certificate
		if cert, err = tls.LoadX509KeyPair(c.certFile, c.keyFile); err == nil {
			if c.current != nil {
				klog.InfoS("Metrics server: loaded a new serving certificate", "certFile", c.certFile)
			}
			c.current, c.stamp, c.failing = &cert, stamp, false
			return c.current, nil
		}
	}
	if c.current == nil {
		return nil, fmt.Errorf("loading the metrics serving certificate: %w", err)
	}
	// The pair may be caught half-written, or not match: keep serving the last good one, say so
	// once, and load again when either file changes.
	if !c.failing || stamp != c.bad {
		c.warnings++
		klog.ErrorS(err, "Metrics server: keeping the previous serving certificate until the files change", "certFile", c.certFile, "keyFile", c.keyFile)
	}
	c.failing, c.bad = true, stamp
	return c.current, nil
}

func (c *certFiles) stat() ([2]fileStamp, error) {
	var stamps [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return stamps, err
		}
		stamps[i] = fileStamp{size: fi.Size(), modTime: fi.ModTime()}
	}
	return stamps, nil
}
