package reference

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/v1beta1"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/webhooks"
)

// registrar is the part of a manager the webhook builder uses: the scheme, the rest config and
// the webhook server the handlers are registered on. Any other method panics (nil Manager).
type registrar struct {
	manager.Manager
	scheme *runtime.Scheme
	server webhook.Server
}

func (r registrar) GetScheme() *runtime.Scheme       { return r.scheme }
func (r registrar) GetConfig() *rest.Config          { return &rest.Config{} }
func (r registrar) GetWebhookServer() webhook.Server { return r.server }

// NewServer returns the reference's webhook server with the Cluster and ClusterClass webhooks
// registered as its main.go registers them (ClusterTopology enabled), reading `classes` and
// `clusters` from memory. The server is not started: its mux serves requests in process, and
// Start serves them over TLS.
func NewServer(options webhook.Options, classes []*clusterv1.ClusterClass, clusters []*clusterv1.Cluster) (webhook.Server, error) {
	ctrllog.SetLogger(logr.Discard())
	if err := feature.MutableGates.Set("ClusterTopology=true"); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clusterv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mgr := registrar{scheme: scheme, server: webhook.NewServer(options)}
	reader := newCacheReader(classes, clusters)
	if err := (&webhooks.ClusterClass{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&webhooks.Cluster{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	return mgr.server, nil
}
