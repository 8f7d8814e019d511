package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/v1beta1"
)

// TestProbe is a tool, not a check: it sends the request of one admission fixture of
// tests/fixtures/admission (its path, operation, objects, objectsFrom, object and oldObject) to
// the reference's webhooks and prints the answer's causes, warnings and patch, to confirm what a
// fixture expects. Skipped unless PROBE names the fixture:
//
//	PROBE=$PWD/../../tests/fixtures/admission/clusterclass/x.yaml go test -run TestProbe -v .
//
// (with the environment of benches/compare.sh). Cluster API v1.10.10 validates a Cluster's
// variables in its defaulting webhook: probe Cluster fixtures with the /mutate- path.
func TestProbe(t *testing.T) {
	path := os.Getenv("PROBE")
	if path == "" {
		t.Skip("PROBE not set")
	}
	text, err := os.ReadFile(path)
	must(t, err)
	var fx struct {
		Path      string            `json:"path"`
		Operation string            `json:"operation"`
		Objects   []json.RawMessage `json:"objects"`
		From      []string          `json:"objectsFrom"`
		Object    json.RawMessage   `json:"object"`
		OldObject json.RawMessage   `json:"oldObject"`
	}
	must(t, yaml.Unmarshal(text, &fx))
	for _, from := range fx.From {
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(path), from))
		must(t, err)
		documents, err := Documents(raw)
		must(t, err)
		for _, object := range documents {
			fx.Objects = append(fx.Objects, object)
		}
	}
	var classes []*clusterv1.ClusterClass
	var clusters []*clusterv1.Cluster
	for _, o := range fx.Objects {
		var meta struct{ Kind string }
		must(t, json.Unmarshal(o, &meta))
		switch meta.Kind {
		case "ClusterClass":
			c, err := Decode[clusterv1.ClusterClass](o)
			must(t, err)
			classes = append(classes, c)
		case "Cluster":
			c, err := Decode[clusterv1.Cluster](o)
			must(t, err)
			clusters = append(clusters, c)
		}
	}
	server, err := NewServer(webhook.Options{}, classes, clusters)
	must(t, err)
	var kind struct{ Kind string }
	obj := fx.Object
	if obj == nil {
		obj = fx.OldObject
	}
	must(t, json.Unmarshal(obj, &kind))
	resource := map[string]string{"Cluster": "clusters", "ClusterClass": "clusterclasses"}[kind.Kind]
	var old []byte
	if fx.OldObject != nil {
		old = fx.OldObject
	}
	body, err := Review(kind.Kind, resource, fx.Operation, fx.Object, old)
	must(t, err)
	answer := post(server.WebhookMux(), fx.Path, body)
	review, err := Decode[admissionv1.AdmissionReview](answer)
	must(t, err)
	r := review.Response
	fmt.Printf("allowed: %v\n", r.Allowed)
	if r.Result != nil {
		fmt.Printf("message: %s\n", r.Result.Message)
		if r.Result.Details != nil {
			for _, c := range r.Result.Details.Causes {
				fmt.Printf("- field: %s\n  type: %s\n  message: %s\n", c.Field, c.Type, c.Message)
			}
		}
	}
	fmt.Printf("warnings: %q\npatch: %s\n", r.Warnings, r.Patch)
}
