package reference

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	ctrlconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1alpha1 "sigs.k8s.io/cluster-api/api/runtime/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/core/webhooks/conversion"
	"sigs.k8s.io/cluster-api/feature"
)

// registrar is the part of a manager the webhook builder uses: the scheme, the rest config, the
// webhook server the handlers are registered on and the converter registry behind its /convert.
// Any other method panics (nil Manager).
type registrar struct {
	manager.Manager
	scheme     *runtime.Scheme
	server     webhook.Server
	converters ctrlconversion.Registry
}

func (r registrar) GetScheme() *runtime.Scheme                    { return r.scheme }
func (r registrar) GetConfig() *rest.Config                       { return &rest.Config{} }
func (r registrar) GetWebhookServer() webhook.Server              { return r.server }
func (r registrar) GetConverterRegistry() ctrlconversion.Registry { return r.converters }

// NewServer returns the reference's webhook server with the Cluster, ClusterClass,
// ClusterResourceSet(+Binding) and ExtensionConfig webhooks registered as its main.go registers them (ClusterTopology
// and RuntimeSDK enabled), with their conversion webhook at /convert, reading `classes` and
// `clusters` from memory. The server is not started: its mux serves requests in process, and
// Start serves them over TLS.
func NewServer(options webhook.Options, classes []*clusterv1.ClusterClass, clusters []*clusterv1.Cluster) (webhook.Server, error) {
	return NewServerReading(options, newCacheReader(classes, clusters))
}

// NewServerReading is NewServer reading stored objects from `reader`.
func NewServerReading(options webhook.Options, reader client.Reader) (webhook.Server, error) {
	ctrllog.SetLogger(logr.Discard())
	if err := feature.MutableGates.Set("ClusterTopology=true,RuntimeSDK=true"); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	mgr := registrar{scheme: scheme, server: webhook.NewServer(options), converters: ctrlconversion.NewRegistry()}
	if err := (&admission.ClusterClass{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&admission.Cluster{Client: reader}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&admission.ClusterResourceSet{}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&admission.ClusterResourceSetBinding{}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&admission.ExtensionConfig{}).SetupWebhookWithManager(mgr); err != nil {
		return nil, err
	}
	return mgr.server, nil
}

// Scheme is the reference's scheme: Cluster API's served versions (v1beta2, the hub, and the
// deprecated v1beta1; v1alpha1 and v1beta2 for ExtensionConfig), KubeadmControlPlane as
// unstructured (the Cluster webhook reads a control plane's version) and CRDs (whose contract
// labels it reads to find the control plane's apiVersion).
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1.AddToScheme, addonsv1.AddToScheme, runtimev1.AddToScheme,
		clusterv1beta1.AddToScheme, addonsv1beta1.AddToScheme, runtimev1alpha1.AddToScheme,
		apiextensionsv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	for _, version := range []string{"v1beta1", "v1beta2"} {
		controlPlane := schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: version, Kind: "KubeadmControlPlane"}
		scheme.AddKnownTypeWithName(controlPlane, &unstructured.Unstructured{})
		scheme.AddKnownTypeWithName(controlPlane.GroupVersion().WithKind("KubeadmControlPlaneList"), &unstructured.UnstructuredList{})
	}
	return scheme, nil
}

// hubs are Cluster API's own converters (core/webhooks/conversion) to v1beta2, by group and kind:
// the kinds whose webhooks the reference serves, and the stored kinds those webhooks read.
var hubs = map[schema.GroupKind]func(*runtime.Scheme) (ctrlconversion.Converter, error){
	{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}:                  conversion.Cluster,
	{Group: clusterv1.GroupVersion.Group, Kind: "ClusterClass"}:             conversion.ClusterClass,
	{Group: addonsv1.GroupVersion.Group, Kind: "ClusterResourceSet"}:        conversion.ClusterResourceSet,
	{Group: addonsv1.GroupVersion.Group, Kind: "ClusterResourceSetBinding"}: conversion.ClusterResourceSetBinding,
	{Group: runtimev1.GroupVersion.Group, Kind: "ExtensionConfig"}:          conversion.ExtensionConfig,
	// Stored objects the Cluster webhook reads (a fixture's MachineDeployments still rolling out).
	{Group: clusterv1.GroupVersion.Group, Kind: "Machine"}:            conversion.Machine,
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineSet"}:         conversion.MachineSet,
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineDeployment"}:  conversion.MachineDeployment,
	{Group: clusterv1.GroupVersion.Group, Kind: "MachinePool"}:        conversion.MachinePool,
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineHealthCheck"}: conversion.MachineHealthCheck,
}

// Hub returns the JSON of `raw` (one object) in the v1beta2 hub version, converted by Cluster
// API's own converter as the API server converts a v1beta1 (or v1alpha1) request for a webhook
// registered with `matchPolicy: Equivalent` for v1beta2. Objects already at the hub version and
// kinds without a converter are returned as they are.
func Hub(raw []byte) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind)
	converter, found := hubs[gvk.GroupKind()]
	if !found || gvk.Version == "v1beta2" {
		return raw, nil
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	spoke, _, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk, err)
	}
	hubGVK := gvk.GroupKind().WithVersion("v1beta2")
	hub, err := scheme.New(hubGVK)
	if err != nil {
		return nil, err
	}
	convert, err := converter(scheme)
	if err != nil {
		return nil, err
	}
	// The converter checks both objects' kinds, which the decoder and New leave empty.
	spoke.GetObjectKind().SetGroupVersionKind(gvk)
	hub.GetObjectKind().SetGroupVersionKind(hubGVK)
	if err := convert.ConvertObject(context.Background(), spoke, hub); err != nil {
		return nil, fmt.Errorf("converting %s to %s: %w", gvk, hubGVK, err)
	}
	hub.GetObjectKind().SetGroupVersionKind(hubGVK)
	return json.Marshal(hub)
}
