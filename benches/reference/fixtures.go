package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Paths of the admission webhooks the reference registers for the two kinds.
const (
	MutateCluster        = "/mutate-cluster-x-k8s-io-v1beta2-cluster"
	ValidateCluster      = "/validate-cluster-x-k8s-io-v1beta2-cluster"
	ValidateClusterClass = "/validate-cluster-x-k8s-io-v1beta2-clusterclass"
)

// Fixture reads one YAML manifest of benches/fixtures (the directory given) as JSON, the
// comment lines dropped.
func Fixture(dir, name string) ([]byte, error) {
	text, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	object, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, err
	}
	return Hub(object)
}

// Decode reads a JSON object into a typed one.
func Decode[T any](raw []byte) (*T, error) {
	var object T
	if err := json.Unmarshal(raw, &object); err != nil {
		return nil, err
	}
	return &object, nil
}

// Review is the AdmissionReview the API server sends for `operation` on `object` (`old` for an
// UPDATE or a DELETE): the same fields as benches/admission.rs sends
// (admission::request::review_json). The name, namespace, group and version are the object's
// (the old object's when there is no object).
func Review(kind, resource, operation string, object, old []byte) ([]byte, error) {
	// The webhooks decide on v1beta2 (`matchPolicy: Equivalent`): the API server converts first.
	var err error
	if object, err = Hub(object); err != nil {
		return nil, err
	}
	if old, err = Hub(old); err != nil {
		return nil, err
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	described := object
	if described == nil {
		described = old
	}
	if err := json.Unmarshal(described, &meta); err != nil {
		return nil, err
	}
	namespace := meta.Metadata.Namespace
	if namespace == "" {
		namespace = "default"
	}
	group, version := clusterv1.GroupVersion.Group, clusterv1.GroupVersion.Version
	if meta.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(meta.APIVersion)
		if err != nil {
			return nil, err
		}
		group, version = gv.Group, gv.Version
	}
	if object == nil {
		object = []byte("null")
	}
	if old == nil {
		old = []byte("null")
	}
	gvk := map[string]string{"group": group, "version": version, "kind": kind}
	gvr := map[string]string{"group": group, "version": version, "resource": resource}
	return json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1",
		"kind":       "AdmissionReview",
		"request": map[string]any{
			"uid":  fmt.Sprintf("%s-%s", strings.ToLower(kind), meta.Metadata.Name),
			"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
			"name": meta.Metadata.Name, "namespace": namespace, "operation": operation,
			"userInfo":  map[string]string{"username": "capi-topology"},
			"object":    json.RawMessage(object),
			"oldObject": json.RawMessage(old),
			"dryRun":    false,
		},
	})
}
