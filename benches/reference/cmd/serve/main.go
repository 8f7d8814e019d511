// Command serve runs Cluster API v1.14.0's Cluster, ClusterClass, ClusterResourceSet(+Binding)
// and ExtensionConfig admission webhooks (v1beta2 paths) and their /convert over HTTPS, as its
// manager serves them, reading ClusterClasses and Clusters from manifests instead of an API
// server: the reference side of benches/compare-tls.sh. It stops on SIGTERM or SIGINT.
//
//	serve --objects examples/quickstart --cert-dir DIR --port 9443 [--host 127.0.0.1]
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"capi-topology/benches/reference"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run() error {
	objectsDir := flag.String("objects", "", "directory of manifests holding the ClusterClasses and Clusters")
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 9443, "port to listen on")
	flag.Parse()
	if *objectsDir == "" || *certDir == "" {
		return errors.New("--objects and --cert-dir are required")
	}
	objects, err := reference.LoadObjects(*objectsDir)
	if err != nil {
		return err
	}
	options := webhook.Options{
		Host:    *host,
		Port:    *port,
		CertDir: *certDir,
		// The manager's default --tls-min-version.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }},
	}
	server, err := reference.NewServer(options, objects.Classes, objects.Clusters)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Fprintf(os.Stderr, "serving %d ClusterClasses, %d Clusters on https://%s:%d\n",
		len(objects.Classes), len(objects.Clusters), *host, *port)
	return server.Start(ctx)
}
