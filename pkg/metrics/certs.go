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
	if err == nil && c.current != nil && stamp == c.stamp {
		return c.current, nil
	}
	if err == nil {
		var cert tls.Certificate
		if cert, err = tls.LoadX509KeyPair(c.certFile, c.keyFile); err == nil {
			if c.current != nil {
				klog.InfoS("Metrics server: loaded a new serving certificate", "certFile", c.certFile)
			}
			c.current, c.stamp = &cert, stamp
			return c.current, nil
		}
	}
	if c.current == nil {
		return nil, fmt.Errorf("loading the metrics serving certificate: %w", err)
	}
	// The pair may be caught half-written: keep serving the last good one and try again on the
	// next handshake.
	klog.ErrorS(err, "Metrics server: keeping the previous serving certificate", "certFile", c.certFile, "keyFile", c.keyFile)
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
