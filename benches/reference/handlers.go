package reference

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/v1beta1"
	expv1 "sigs.k8s.io/cluster-api/exp/api/v1beta1"
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
// registered as its main.go registers them (ClusterTopology and RuntimeSDK enabled), reading `classes` and
// `clusters` from memory. The server is not started: its mux serves requests in process, and
// Start serves them over TLS.
func NewServer(options webhook.Options, classes []*clusterv1.ClusterClass, clusters []*clusterv1.Cluster) (webhook.Server, error) {
	return NewServerReading(options, newCacheReader(classes, clusters))
}

// NewServerReading is NewServer with the objects read through `reader`, and the
// ClusterResourceSet and ClusterResourceSetBinding webhooks registered as well.
func NewServerReading(options webhook.Options, reader client.Reader) (webhook.Server, error) {
	ctrllog.SetLogger(logr.Discard())
	// RuntimeSDK as capi-topology, which always serves external patches.
	if err := feature.MutableGates.Set("ClusterTopology=true,RuntimeSDK=true"); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	mgr := registrar{scheme: scheme, server: webhook.NewServer(options)}
	if err := (&webhooks.ClusterClass{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&webhooks.Cluster{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&webhooks.ClusterResourceSet{}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&webhooks.ClusterResourceSetBinding{}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	return mgr.server, nil
}

// Scheme holds the kinds the webhooks decode or read: Cluster API's core, addons and
// experimental (MachinePool) groups, and the kubeadm control plane as an unstructured kind (the
// webhooks read control planes as unstructured objects).
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1.AddToScheme, addonsv1.AddToScheme, expv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	controlPlane := schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane"}
	scheme.AddKnownTypeWithName(controlPlane, &unstructured.Unstructured{})
	scheme.AddKnownTypeWithName(controlPlane.GroupVersion().WithKind("KubeadmControlPlaneList"), &unstructured.UnstructuredList{})
	return scheme, nil
}
