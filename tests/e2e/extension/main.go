// Command extension is a topology mutation Runtime Extension built with Cluster API's own Runtime
// SDK (Cluster API v1.14.0: exp/runtime/server and exp/runtime/topologymutation, with the hook
// types from the separate sigs.k8s.io/cluster-api/api module), so that capi-topology's hook client
// is tested against the real wire format rather than against our own reading of it.
//
// It serves, over HTTPS with tls.crt and tls.key from --cert-dir:
//   - Discovery (added by the SDK's server): lists the three handlers below.
//   - GeneratePatches "generate-patches": sets a DockerClusterTemplate's load balancer image
//     repository from the lbImageRepository variable, and adds a containerd proxy drop-in to a
//     KubeadmControlPlaneTemplate from the http-proxy variable.
//   - ValidateTopology "validate-topology": fails when http-proxy is set but the drop-in is absent
//     from the KubeadmControlPlaneTemplate, i.e. the patches were not applied.
//   - DiscoverVariables "discover-variables": declares lbImageRepository (a string) and http-proxy
//     as an object {host, port}, so that it conflicts with an inline string definition of the
//     same name (the definitionFrom example of the Runtime SDK book).
//   - with --control-dir only: the nine lifecycle hooks and GenerateUpgradePlan, answering as the
//     test says and recording every call (lifecycle.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/exp/runtime/server"
	"sigs.k8s.io/cluster-api/exp/runtime/topologymutation"
)

const (
	lbImageRepositoryVariable = "lbImageRepository"
	httpProxyVariable         = "http-proxy"
	// proxyDropInPath is the containerd drop-in the http-proxy variable becomes on control plane nodes.
	proxyDropInPath = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
)

// httpProxy is the value of the http-proxy variable as this extension defines it.
type httpProxy struct {
	Host string `json:"host"`
	Port int64  `json:"port"`
}

func main() {
	certDir := flag.String("cert-dir", "", "directory holding tls.crt and tls.key")
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", server.DefaultPort, "port to listen on")
	controlDir := flag.String("control-dir", "", "serve the lifecycle hooks, answering from answers.json there and recording calls in calls.jsonl")
	flag.Parse()
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig()))
	if err := run(*certDir, *host, *port, *controlDir); err != nil {
		fmt.Fprintf(os.Stderr, "extension: %v\n", err)
		os.Exit(1)
	}
}

func run(certDir, host string, port int, controlDir string) error {
	if certDir == "" {
		return fmt.Errorf("--cert-dir is required")
	}
	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		return err
	}
	srv, err := server.New(server.Options{Catalog: catalog, Host: host, Port: port, CertDir: certDir})
	if err != nil {
		return err
	}
	handlers := []server.ExtensionHandler{
		{Hook: runtimehooksv1.GeneratePatches, Name: "generate-patches", HandlerFunc: generatePatches},
		{Hook: runtimehooksv1.ValidateTopology, Name: "validate-topology", HandlerFunc: validateTopology},
		{Hook: runtimehooksv1.DiscoverVariables, Name: "discover-variables", HandlerFunc: discoverVariables},
	}
	if controlDir != "" {
		handlers = append(handlers, lifecycleHandlers(&control{dir: controlDir})...)
	}
	for _, handler := range handlers {
		if err := srv.AddExtensionHandler(handler); err != nil {
			return err
		}
	}
	return srv.Start(ctrl.SetupSignalHandler())
}

// generatePatches patches the templates it knows and leaves every other kind alone: the
// unstructured decoder accepts any object, so the kind switch is the only filter.
func generatePatches(ctx context.Context, req *runtimehooksv1.GeneratePatchesRequest, resp *runtimehooksv1.GeneratePatchesResponse) {
	topologymutation.WalkTemplates(ctx, unstructured.UnstructuredJSONScheme, req, resp,
		func(_ context.Context, obj runtime.Object, variables map[string]apiextensionsv1.JSON, _ runtimehooksv1.HolderReference) error {
			template, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return nil
			}
			switch template.GroupVersionKind().GroupKind().String() {
			case "DockerClusterTemplate.infrastructure.cluster.x-k8s.io":
				return patchDockerClusterTemplate(template, variables)
			case "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io":
				return patchKubeadmControlPlaneTemplate(template, variables)
			}
			return nil
		})
}

func patchDockerClusterTemplate(template *unstructured.Unstructured, variables map[string]apiextensionsv1.JSON) error {
	repository, err := topologymutation.GetStringVariable(variables, lbImageRepositoryVariable)
	if topologymutation.IsNotFoundError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("variable %q: %w", lbImageRepositoryVariable, err)
	}
	return unstructured.SetNestedField(template.Object, repository, "spec", "template", "spec", "loadBalancer", "imageRepository")
}

func patchKubeadmControlPlaneTemplate(template *unstructured.Unstructured, variables map[string]apiextensionsv1.JSON) error {
	proxy, found, err := proxyFrom(variables)
	if err != nil || !found {
		return err
	}
	path := []string{"spec", "template", "spec", "kubeadmConfigSpec", "files"}
	files, _, err := unstructured.NestedSlice(template.Object, path...)
	if err != nil {
		return err
	}
	kept := make([]interface{}, 0, len(files)+1)
	for _, file := range files {
		if entry, ok := file.(map[string]interface{}); ok && entry["path"] == proxyDropInPath {
			continue
		}
		kept = append(kept, file)
	}
	kept = append(kept, map[string]interface{}{
		"path":        proxyDropInPath,
		"owner":       "root:root",
		"permissions": "0644",
		"content":     proxyDropIn(proxy),
	})
	return unstructured.SetNestedSlice(template.Object, kept, path...)
}

// validateTopology checks the patched topology: a KubeadmControlPlaneTemplate must carry the
// proxy drop-in whenever http-proxy is set.
func validateTopology(_ context.Context, req *runtimehooksv1.ValidateTopologyRequest, resp *runtimehooksv1.ValidateTopologyResponse) {
	resp.Status = runtimehooksv1.ResponseStatusSuccess
	global := topologymutation.ToMap(req.Variables)
	for _, item := range req.Items {
		variables, err := topologymutation.MergeVariableMaps(global, topologymutation.ToMap(item.Variables))
		if err == nil {
			err = validateItem(item, variables)
		}
		if err != nil {
			resp.Status = runtimehooksv1.ResponseStatusFailure
			resp.Message = err.Error()
			return
		}
	}
}

func validateItem(item *runtimehooksv1.ValidateTopologyRequestItem, variables map[string]apiextensionsv1.JSON) error {
	template := &unstructured.Unstructured{}
	if err := template.UnmarshalJSON(item.Object.Raw); err != nil {
		return fmt.Errorf("%s %s: %w", item.HolderReference.Kind, item.HolderReference.Name, err)
	}
	if template.GetKind() != "KubeadmControlPlaneTemplate" {
		return nil
	}
	proxy, found, err := proxyFrom(variables)
	if err != nil || !found {
		return err
	}
	files, _, _ := unstructured.NestedSlice(template.Object, "spec", "template", "spec", "kubeadmConfigSpec", "files")
	for _, file := range files {
		if entry, ok := file.(map[string]interface{}); ok && entry["path"] == proxyDropInPath && entry["content"] == proxyDropIn(proxy) {
			return nil
		}
	}
	return fmt.Errorf("KubeadmControlPlaneTemplate %s of %s %s: http-proxy is set but %s is missing or stale",
		template.GetName(), item.HolderReference.Kind, item.HolderReference.Name, proxyDropInPath)
}

// discoverVariables declares the variables the patches above read, as v1beta2
// ClusterClassVariables (since v1.13 the hook answers v1beta2: `required` is a *bool, set
// explicitly as Cluster API's own test extension does).
func discoverVariables(_ context.Context, _ *runtimehooksv1.DiscoverVariablesRequest, resp *runtimehooksv1.DiscoverVariablesResponse) {
	resp.Status = runtimehooksv1.ResponseStatusSuccess
	resp.Variables = []clusterv1.ClusterClassVariable{
		{
			Name:     lbImageRepositoryVariable,
			Required: boolPtr(false),
			Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
				Type:        "string",
				Default:     &apiextensionsv1.JSON{Raw: []byte(`"kindest"`)},
				Description: "lbImageRepository is the image repository of the load balancer.",
			}},
		},
		{
			Name:     httpProxyVariable,
			Required: boolPtr(false),
			Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
				Type:        "object",
				Description: "proxy for http calls.",
				Example:     &apiextensionsv1.JSON{Raw: []byte(`{"host":"proxy.example.com","port":3128}`)},
				Required:    []string{"host"},
				Properties: map[string]clusterv1.JSONSchemaProps{
					"host": {Type: "string", MinLength: ptr(1)},
					"port": {Type: "integer", Minimum: ptr(1), Maximum: ptr(65535), Default: &apiextensionsv1.JSON{Raw: []byte(`3128`)}},
				},
			}},
		},
	}
}

func proxyFrom(variables map[string]apiextensionsv1.JSON) (httpProxy, bool, error) {
	var proxy httpProxy
	err := topologymutation.GetObjectVariableInto(variables, httpProxyVariable, &proxy)
	if topologymutation.IsNotFoundError(err) {
		return proxy, false, nil
	}
	if err == nil && proxy.Host == "" {
		err = fmt.Errorf("host must be set")
	}
	if err != nil {
		return proxy, false, fmt.Errorf("variable %q: %w", httpProxyVariable, err)
	}
	if proxy.Port == 0 {
		proxy.Port = 3128
	}
	return proxy, true, nil
}

func proxyDropIn(proxy httpProxy) string {
	return fmt.Sprintf("[Service]\nEnvironment=\"HTTP_PROXY=http://%s:%d\"\n", proxy.Host, proxy.Port)
}

func ptr(v int64) *int64 { return &v }

func boolPtr(v bool) *bool { return &v }
