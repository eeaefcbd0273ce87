package metrics

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/tlsprofile"
)

const (
	// DefaultBindAddress is where the metrics Service sends scrapes.
	DefaultBindAddress = ":60000"
	// DefaultCertFile and DefaultKeyFile are where the Deployment mounts the samples-operator-tls
	// secret that the service CA issues for the metrics Service.
	DefaultCertFile = "/etc/secrets/tls.crt"
	DefaultKeyFile  = "/etc/secrets/tls.key"

	// DefaultMaxConnections is four times what Prometheus's two replicas hold, and few enough
	// that a flood costs little memory (each connection holds TLS and HTTP buffers and a
	// goroutine of some 50 KiB). Which connection makes room for a newcomer is fairListener's
	// choice, so that a client holding many cannot keep a scraper out; idle ones are closed after
	// idleTimeout in any case.
	DefaultMaxConnections = 8
	idleTimeout           = 5 * time.Second

	// healthMaxConnections bounds the health listener: each of the kubelet's two probes opens a
	// connection for one request. A plain HTTP connection costs some 10 KiB.
	healthMaxConnections = 4
	// healthTimeout bounds each phase of a probe's connection: the kubelet gives up after a
	// second by default.
	healthTimeout = 2 * time.Second

	shutdownGrace = 5 * time.Second
)

// ServerOptions configures the metrics server.
type ServerOptions struct {
	// BindAddress is host:port to listen on; "" means DefaultBindAddress.
	BindAddress string
	// CertFile and KeyFile hold the PEM serving certificate and key; "" means the defaults. They
	// are read again whenever either file changes.
	CertFile, KeyFile string
	// SelfSigned serves a certificate made in memory at start, for localhost, the loopback
	// addresses and the host name, instead of CertFile and KeyFile: for a process run outside a
	// cluster, where no service CA issues one. No scraper trusts it unless told to.
	SelfSigned bool
	// TLS is the cluster TLS profile to serve with at start (SetTLS changes it); the zero value
	// means Intermediate, the default of a cluster that sets none.
	TLS tlsprofile.Settings

	// Gatherer is what /metrics serves, usually NewRegistry(collector).
	Gatherer prometheus.Gatherer
	// TokenReviews and SubjectAccessReviews decide who may get /metrics: a request needs a
	// bearer token that the API server authenticates and authorises for GET /metrics.
	TokenReviews         authenticationclient.TokenReviewInterface
	SubjectAccessReviews authorizationclient.SubjectAccessReviewInterface
	// VerdictTTL is how long an answer about a token is remembered; 0 means 10 seconds.
	VerdictTTL time.Duration
	// MaxReviewsInFlight bounds the tokens under review at once (more get 429); 0 means
	// DefaultMaxReviewsInFlight.
	MaxReviewsInFlight int
	// MaxConnections bounds the connections open at once (fairListener decides which make room
	// for newcomers); 0 means DefaultMaxConnections.
	MaxConnections int
	// Ready backs /readyz; nil means always ready.
	Ready func() bool
	// HealthBindAddress is host:port where /healthz and /readyz are also served, in plain HTTP,
	// on a listener of their own: the kubelet's probes go there, where no metrics client can
	// crowd them out. "" means none; the metrics port serves them in any case.
	HealthBindAddress string

	// Clock is for tests; nil means the real clock.
	Clock clock.PassiveClock
}

// Server serves /metrics (authenticated and authorised), /healthz and /readyz over HTTPS, and
// the last two again in plain HTTP on the health listener when there is one.
type Server struct {
	bindAddress string
	server      *http.Server

	healthBindAddress string
	health            *http.Server

	maxConnections int
	clock          clock.PassiveClock

	mu             sync.Mutex
	listener       net.Listener
	healthListener net.Listener

	// tls is the profile in force, read at every handshake so that a change needs no restart.
	tls            atomic.Pointer[tlsprofile.Settings]
	getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// NewServer checks the options and loads the serving certificate once, so that a missing or bad
// certificate stops the operator at start rather than at the first scrape.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Gatherer == nil || opts.TokenReviews == nil || opts.SubjectAccessReviews == nil {
		return nil, errors.New("metrics server: Gatherer, TokenReviews and SubjectAccessReviews are required")
	}
	if opts.BindAddress == "" {
		opts.BindAddress = DefaultBindAddress
	}
	if opts.CertFile == "" {
		opts.CertFile = DefaultCertFile
	}
	if opts.KeyFile == "" {
		opts.KeyFile = DefaultKeyFile
	}
	if opts.TLS.MinVersion == 0 {
		opts.TLS = tlsprofile.Default()
	}
	if opts.VerdictTTL <= 0 {
		opts.VerdictTTL = defaultVerdictTTL
	}
	if opts.MaxReviewsInFlight <= 0 {
		opts.MaxReviewsInFlight = DefaultMaxReviewsInFlight
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	getCertificate, err := servingCertificate(opts)
	if err != nil {
		return nil, err
	}

	auth := newReviewer(opts.TokenReviews, opts.SubjectAccessReviews, "/metrics", opts.VerdictTTL, opts.MaxReviewsInFlight, opts.Clock)
	ready := opts.Ready
	if ready == nil {
		ready = func() bool { return true }
	}
	mux := probes(ready)
	mux.Handle("/metrics", auth.protect(promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{})))

	s := &Server{
		bindAddress:       opts.BindAddress,
		healthBindAddress: opts.HealthBindAddress,
		getCertificate:    getCertificate,
		maxConnections:    opts.MaxConnections,
		clock:             opts.Clock,
		server: &http.Server{
			Handler:     trackRequests(mux),
			ConnContext: withTrackedConn,
			ErrorLog:    serverErrors,
			// A scraper sends a few hundred bytes of headers at once; anything slower or larger
			// only holds a connection.
			MaxHeaderBytes:    16 << 10,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       idleTimeout,
		},
		health: &http.Server{
			Handler:           trackRequests(probes(ready)),
			ConnContext:       withTrackedConn,
			ErrorLog:          serverErrors,
			MaxHeaderBytes:    4 << 10,
			ReadHeaderTimeout: healthTimeout,
			ReadTimeout:       healthTimeout,
			WriteTimeout:      healthTimeout,
			IdleTimeout:       healthTimeout,
		},
	}
	s.server.TLSConfig = &tls.Config{GetConfigForClient: s.configForClient, GetCertificate: getCertificate}
	s.SetTLS(opts.TLS)
	return s, nil
}

// probes serves /healthz (the process serves) and /readyz (ready says it can do its work).
func probes(ready func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

// SetTLS makes the next handshakes follow settings; connections already open keep theirs.
func (s *Server) SetTLS(settings tlsprofile.Settings) {
	s.tls.Store(&settings)
}

// TLS returns the profile in force.
func (s *Server) TLS() tlsprofile.Settings {
	return *s.tls.Load()
}

func (s *Server) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	settings := s.tls.Load()
	return &tls.Config{
		MinVersion:     settings.MinVersion,
		CipherSuites:   settings.CipherSuites,
		GetCertificate: s.getCertificate,
		NextProtos:     []string{"http/1.1"},
	}, nil
}

// servingCertificate picks the certificate source. The self-signed one lives only in memory and
// never changes, so unlike the files there is nothing to look at again on each handshake.
func servingCertificate(opts ServerOptions) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	if !opts.SelfSigned {
		certs, err := newCertFiles(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, err
		}
		return certs.GetCertificate, nil
	}
	hostname, _ := os.Hostname()
	hosts := selfSignedHosts(hostname)
	cert, err := selfSignedCertificate(hosts, selfSignedLifetime)
	if err != nil {
		return nil, err
	}
	klog.InfoS("Metrics server: made a self-signed serving certificate", "hosts", hosts, "notAfter", cert.Leaf.NotAfter)
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert, nil }, nil
}

// Listen binds the addresses (if Run has not yet) and returns the metrics one; with port 0 it
// tells which port was picked.
func (s *Server) Listen() (net.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		ln, err := net.Listen("tcp", s.bindAddress)
		if err != nil {
			return nil, fmt.Errorf("metrics server: %w", err)
		}
		s.listener = newFairListener(ln, s.maxConnections, s.clock)
	}
	if s.healthListener == nil && s.healthBindAddress != "" {
		ln, err := net.Listen("tcp", s.healthBindAddress)
		if err != nil {
			return nil, fmt.Errorf("health server: %w", err)
		}
		s.healthListener = newFairListener(ln, healthMaxConnections, s.clock)
	}
	return s.listener.Addr(), nil
}

// Run serves until ctx is cancelled, then lets requests in flight finish for up to 5 seconds.
// Either listener failing stops both.
func (s *Server) Run(ctx context.Context) error {
	addr, err := s.Listen()
	if err != nil {
		return err
	}
	s.mu.Lock()
	ln, healthLn := s.listener, s.healthListener
	s.mu.Unlock()

	servers := []*http.Server{s.server}
	served := make(chan error, 2)
	go func() { served <- s.server.ServeTLS(ln, "", "") }()
	klog.InfoS("Serving metrics", "address", addr.String())
	if healthLn != nil {
		servers = append(servers, s.health)
		go func() { served <- s.health.Serve(healthLn) }()
		klog.InfoS("Serving health probes", "address", healthLn.Addr().String())
	}

	select {
	case err := <-served:
		for _, srv := range servers {
			_ = srv.Close()
		}
		for range servers[1:] {
			<-served
		}
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			_ = srv.Close()
			errs = append(errs, fmt.Errorf("metrics server: shutting down: %w", err))
		}
	}
	for range servers {
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("metrics server: %w", err))
		}
	}
	return errors.Join(errs...)
}
